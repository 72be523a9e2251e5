package rendezvous

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MaxPayload bounds the payload of Exchange: a rendezvous carries ids and
// addresses (an NCCL unique id is 128 bytes), and a peer must not allocate
// what a stray program on the port claims to send.
const MaxPayload = 1 << 20

// The wire protocol, big-endian. Every message starts with the same 8
// bytes, which later versions keep so that they can tell each other apart:
//
//	magic "CGRV", version uint16, kind uint16
//
// A peer sends hello (+ rank uint32, world size uint32); rank 0 answers
// payload or error (+ length uint32, bytes); after a payload the peer sends
// ack, and rank 0 returns once every peer has.
const (
	protoVersion = 1
	kindHello    = 1
	kindPayload  = 2
	kindError    = 3
	kindAck      = 4
	headerSize   = 8
	helloSize    = headerSize + 8
	maxErrorMsg  = 4 << 10
)

var magic = [4]byte{'C', 'G', 'R', 'V'}

// helloTimeout is how long rank 0 gives a new connection to say hello; a
// stray client that sends nothing is dropped then (it never blocks the
// others meanwhile: each connection has its own goroutine).
const helloTimeout = 10 * time.Second

// testHookRegistered, when set (by tests), is called with each rank that
// rank 0 registers.
var testHookRegistered func(rank int)

// Exchange hands rank 0's payload to every rank and returns it.
//
// Rank 0 listens on Addr (see the package documentation for the
// interface), accepts the WorldSize-1 other ranks, checks what each says
// (rank, world size, protocol), sends them the payload and returns once
// every one has acknowledged it. The other ranks dial Addr, retrying with
// backoff (rank 0 may start after them), and return the payload; their own
// payload argument is not read and may be nil. With WorldSize 1 Exchange
// returns a copy of payload at once.
//
// The deadline is ctx's; without one it is CUDAGO_RENDEZVOUS_TIMEOUT (a Go
// duration) or DefaultTimeout. When it passes, rank 0's error names the
// ranks that never came and the others' name the address that never
// answered. A rank 0 that exits after accepting a rank makes that rank
// fail at once (the connection closes), and a rank 0 that fails (a wrong
// world size, a rank that came twice, the deadline) tells the ranks it
// holds why. Exchange is safe to call from several goroutines (with
// different Envs for rank 0: one Addr takes one listener) and leaves no
// goroutine or connection behind.
func (e Env) Exchange(ctx context.Context, payload []byte) ([]byte, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if e.Rank == 0 && len(payload) > MaxPayload {
		return nil, fmt.Errorf("rendezvous: payload of %d bytes is larger than MaxPayload (%d)", len(payload), MaxPayload)
	}
	if e.WorldSize == 1 {
		return slices.Clone(payload), nil
	}
	var cancel context.CancelFunc
	deadline, ok := ctx.Deadline()
	if !ok {
		d, err := envTimeoutValue()
		if err != nil {
			return nil, err
		}
		if d == 0 {
			d = DefaultTimeout
		}
		ctx, cancel = context.WithTimeout(ctx, d)
		deadline, _ = ctx.Deadline()
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	wait := time.Until(deadline).Round(time.Millisecond)
	if e.Rank == 0 {
		return e.serve(ctx, deadline, wait, payload)
	}
	return e.join(ctx, deadline, wait)
}

// check validates an Env that may have been built by hand.
func (e Env) check() error {
	if e.WorldSize < 1 {
		return fmt.Errorf("rendezvous: WorldSize %d must be at least 1", e.WorldSize)
	}
	if e.Rank < 0 || e.Rank >= e.WorldSize {
		return fmt.Errorf("rendezvous: Rank %d is not from 0 to WorldSize-1 (%d)", e.Rank, e.WorldSize-1)
	}
	if e.WorldSize > 1 {
		return checkAddr("Addr", e.Addr)
	}
	return nil
}

// listenAddr is where rank 0 listens for Addr: a loopback host only on
// loopback (one machine: nothing outside needs to reach it), any other on
// every interface of the port. A name given as MASTER_ADDR can resolve on
// rank 0's own machine to an address the others do not use (Debian maps
// its host name to 127.0.1.1; hosts have several networks), and torch's
// TCPStore listens on every interface for the same reason.
func listenAddr(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return addr
	}
	return ":" + port
}

// ---- rank 0 ----

type server struct {
	e        Env
	deadline time.Time
	ln       net.Listener
	wg       sync.WaitGroup // the accept loop, the handlers, the writers

	mu      sync.Mutex
	conns   map[net.Conn]struct{} // accepted and still open
	peers   map[int]net.Conn      // ranks that said hello and wait
	left    map[int]string        // ranks that came and went before the payload, and why
	sending bool                  // every rank is in: peers is final
	closed  bool                  // Exchange is returning
	fatal   error
	strays  []string // the first few connections turned away, for errors
	nStrays int

	allIn  chan struct{} // closed when sending becomes true
	failed chan struct{} // closed when fatal is set
	acks   chan ackResult
}

type ackResult struct {
	rank int
	err  error
}

func (e Env) serve(ctx context.Context, deadline time.Time, wait time.Duration, payload []byte) ([]byte, error) {
	la := listenAddr(e.Addr)
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", la)
	if err != nil {
		hint := ""
		if errors.Is(err, syscall.EADDRINUSE) {
			hint = " (another program or job has the port: choose another with MASTER_PORT or " + envAddr + ")"
		}
		return nil, fmt.Errorf("rendezvous: rank 0 cannot listen on %s (for %s): %w%s", la, e.Addr, err, hint)
	}
	s := &server{
		e: e, deadline: deadline, ln: ln,
		conns:  map[net.Conn]struct{}{},
		peers:  map[int]net.Conn{},
		left:   map[int]string{},
		allIn:  make(chan struct{}),
		failed: make(chan struct{}),
		acks:   make(chan ackResult, e.WorldSize-1),
	}
	s.wg.Add(1)
	go s.acceptLoop()
	defer s.shutdown()

	select {
	case <-s.allIn:
	case <-s.failed:
		s.mu.Lock()
		err := s.fatal
		s.closed = true
		s.mu.Unlock()
		s.broadcast("rank 0 gave up: " + strings.TrimPrefix(err.Error(), "rendezvous: "))
		return nil, err
	case <-ctx.Done():
		s.mu.Lock()
		if s.sending {
			// Every rank came just in time: the wait for the
			// acknowledgements below reports the deadline.
			s.mu.Unlock()
			break
		}
		s.closed = true
		var missing, never []int
		var left []string
		for r := 1; r < e.WorldSize; r++ {
			if _, ok := s.peers[r]; ok {
				continue
			}
			missing = append(missing, r)
			if why, ok := s.left[r]; ok {
				left = append(left, fmt.Sprintf("rank %d connected but left (%s)", r, why))
			} else {
				never = append(never, r)
			}
		}
		arrived := e.WorldSize - len(missing)
		strays := s.strayNote()
		s.mu.Unlock()
		if errors.Is(ctx.Err(), context.Canceled) {
			s.broadcast("rank 0 was canceled")
			return nil, fmt.Errorf("rendezvous: rank 0 canceled while waiting for %s on %s: %w", rankList(missing), e.Addr, ctx.Err())
		}
		var why []string
		if len(never) > 0 {
			why = append(why, rankList(never)+" never connected")
		}
		why = append(why, left...)
		s.broadcast(fmt.Sprintf("rank 0 gave up after %v: %s", wait, strings.Join(why, "; ")))
		return nil, fmt.Errorf("rendezvous: rank 0 waited %v on %s, but %s (%d of %d ranks arrived)%s",
			wait, e.Addr, strings.Join(why, "; "), arrived, e.WorldSize, strays)
	}

	// Every rank is in: stop accepting and hand out the payload.
	s.ln.Close()
	for _, c := range s.registered() {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			c.SetWriteDeadline(s.deadline)
			if err := writeMsg(c, kindPayload, payload); err != nil {
				// The handler's read of the acknowledgement fails too and
				// reports this rank.
				c.Close()
			}
		}()
	}
	var lost []string
	for range e.WorldSize - 1 {
		select {
		case r := <-s.acks:
			if r.err != nil {
				lost = append(lost, fmt.Sprintf("rank %d (%v)", r.rank, r.err))
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("rendezvous: rank 0 sent the payload on %s, but not every rank acknowledged it within %v: %w", e.Addr, wait, ctx.Err())
		}
	}
	if len(lost) > 0 {
		sort.Strings(lost)
		return nil, fmt.Errorf("rendezvous: rank 0 sent the payload on %s, but the connection of %s broke before it acknowledged", e.Addr, strings.Join(lost, ", "))
	}
	return slices.Clone(payload), nil
}

func (s *server) acceptLoop() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors and the like: the listener stays; try
			// again shortly (shutdown closes it).
			time.Sleep(20 * time.Millisecond)
			continue
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.handle(c)
	}
}

func (s *server) handle(c net.Conn) {
	defer s.wg.Done()
	defer s.drop(c)
	c.SetReadDeadline(earliest(s.deadline, time.Now().Add(helloTimeout)))
	var h [helloSize]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		s.stray(c, fmt.Sprintf("sent no hello (%v)", err))
		return
	}
	if [4]byte(h[:4]) != magic {
		s.stray(c, fmt.Sprintf("sent %q, not a cudago rendezvous hello", h[:]))
		return
	}
	version, kind := binary.BigEndian.Uint16(h[4:]), binary.BigEndian.Uint16(h[6:])
	rank, world := int(binary.BigEndian.Uint32(h[8:])), int(binary.BigEndian.Uint32(h[12:]))
	from := c.RemoteAddr().String()
	switch {
	case version != protoVersion:
		s.reject(c, fmt.Errorf("rendezvous: a rank at %s speaks rendezvous protocol %d, rank 0 speaks %d (different cudago versions?)", from, version, protoVersion))
		return
	case kind != kindHello:
		s.stray(c, fmt.Sprintf("sent message kind %d instead of a hello", kind))
		return
	case world != s.e.WorldSize:
		s.reject(c, fmt.Errorf("rendezvous: rank %d at %s has world size %d, rank 0 has %d", rank, from, world, s.e.WorldSize))
		return
	case rank < 1 || rank >= world:
		s.reject(c, fmt.Errorf("rendezvous: a process at %s says it is rank %d, not from 1 to %d", from, rank, world-1))
		return
	}

	s.mu.Lock()
	if s.closed || s.sending || s.fatal != nil {
		s.mu.Unlock()
		replyError(c, fmt.Sprintf("rank 0 is no longer taking ranks (rank %d came after all %d ranks were in, or after rank 0 gave up)", rank, s.e.WorldSize))
		return
	}
	if old, dup := s.peers[rank]; dup {
		s.mu.Unlock()
		s.reject(c, fmt.Errorf("rendezvous: rank %d connected twice, from %s and from %s", rank, old.RemoteAddr(), from))
		return
	}
	s.peers[rank] = c
	delete(s.left, rank)
	if len(s.peers) == s.e.WorldSize-1 {
		s.sending = true
		close(s.allIn)
	}
	s.mu.Unlock()
	if hook := testHookRegistered; hook != nil {
		hook(rank)
	}

	// The peer sends nothing more until it has the payload, so this read
	// also notices a peer that goes away while the others are awaited. No
	// deadline: serve enforces it, and shutdown closes the connection.
	c.SetReadDeadline(time.Time{})
	var a [headerSize]byte
	_, err := io.ReadFull(c, a[:])
	if err == nil && ([4]byte(a[:4]) != magic || binary.BigEndian.Uint16(a[6:]) != kindAck) {
		err = fmt.Errorf("answered with %q instead of an acknowledgement", a[:])
	}
	s.mu.Lock()
	if !s.sending {
		// Gone before the payload was sent: forget it, so that the rank
		// may connect again (and is reported missing if it does not).
		if s.peers[rank] == c && !s.closed {
			delete(s.peers, rank)
			why := "before sending anything more"
			if err != nil {
				why = err.Error()
			}
			s.left[rank] = why
		}
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.acks <- ackResult{rank, err} // buffered for every peer
}

// stray notes a connection that is not a cudago rank: it does not stop the
// rendezvous.
func (s *server) stray(c net.Conn, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nStrays++
	if len(s.strays) < 3 {
		s.strays = append(s.strays, c.RemoteAddr().String()+" "+why)
	}
}

func (s *server) strayNote() string {
	if s.nStrays == 0 {
		return ""
	}
	note := fmt.Sprintf("; %d connection(s) were turned away as not cudago ranks: %s", s.nStrays, strings.Join(s.strays, "; "))
	if s.nStrays > len(s.strays) {
		note += "; ..."
	}
	return note
}

// reject answers a cudago rank that cannot take part, and makes the
// rendezvous fail unless every rank is already in.
func (s *server) reject(c net.Conn, err error) {
	replyError(c, strings.TrimPrefix(err.Error(), "rendezvous: "))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fatal == nil && !s.sending && !s.closed {
		s.fatal = err
		close(s.failed)
	}
}

// broadcast tells every registered rank why rank 0 gives up.
func (s *server) broadcast(msg string) {
	for _, c := range s.registered() {
		replyError(c, msg)
	}
}

// registered returns the connections of the registered ranks, copied
// under the lock so that writing to them holds none.
func (s *server) registered() []net.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Values(s.peers))
}

func (s *server) drop(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.Close()
}

// shutdown closes the listener and every connection and waits for the
// goroutines.
func (s *server) shutdown() {
	s.mu.Lock()
	s.closed = true
	conns := make([]net.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	s.ln.Close()
	for _, c := range conns {
		c.Close()
	}
	s.wg.Wait()
}

// replyError sends an error message, briefly: the peer may be gone.
func replyError(c net.Conn, msg string) {
	if len(msg) > maxErrorMsg {
		msg = msg[:maxErrorMsg]
	}
	c.SetWriteDeadline(time.Now().Add(time.Second))
	writeMsg(c, kindError, []byte(msg))
}

// ---- the other ranks ----

func (e Env) join(ctx context.Context, deadline time.Time, wait time.Duration) ([]byte, error) {
	c, err := e.dial(ctx, wait)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	// Cancellation interrupts the reads and writes below.
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	c.SetDeadline(deadline)

	var h [helloSize]byte
	putHeader(h[:], kindHello)
	binary.BigEndian.PutUint32(h[8:], uint32(e.Rank))
	binary.BigEndian.PutUint32(h[12:], uint32(e.WorldSize))
	if _, err := c.Write(h[:]); err != nil {
		return nil, e.lost(ctx, wait, err)
	}
	kind, body, err := readMsg(c)
	if err != nil {
		return nil, e.lost(ctx, wait, err)
	}
	if kind == kindError {
		return nil, fmt.Errorf("rendezvous: rank %d: rank 0 at %s answered: %s", e.Rank, e.Addr, body)
	}
	var a [headerSize]byte
	putHeader(a[:], kindAck)
	if _, err := c.Write(a[:]); err != nil {
		return nil, e.lost(ctx, wait, err)
	}
	return body, nil
}

// dial connects to rank 0, retrying with backoff until ctx ends.
func (e Env) dial(ctx context.Context, wait time.Duration) (net.Conn, error) {
	var (
		d       net.Dialer
		lastErr error
		backoff = 10 * time.Millisecond
	)
	for {
		c, err := d.DialContext(ctx, "tcp", e.Addr)
		if err == nil {
			return c, nil
		}
		if ctx.Err() == nil || lastErr == nil {
			lastErr = err
		}
		if ctx.Err() == nil {
			// Jitter spreads the retries of many ranks.
			t := time.NewTimer(backoff/2 + rand.N(backoff))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
			backoff = min(2*backoff, 500*time.Millisecond)
		}
		if err := ctx.Err(); err != nil {
			if errors.Is(err, context.Canceled) {
				return nil, fmt.Errorf("rendezvous: rank %d canceled while dialing rank 0 at %s: %w", e.Rank, e.Addr, err)
			}
			return nil, fmt.Errorf("rendezvous: rank %d: rank 0 never answered at %s within %v (last error: %v)", e.Rank, e.Addr, wait, lastErr)
		}
	}
}

// lost explains a failed read or write on the connection to rank 0.
func (e Env) lost(ctx context.Context, wait time.Duration, err error) error {
	err = wrapTimeout(err)
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return fmt.Errorf("rendezvous: rank %d canceled while waiting for rank 0 at %s: %w", e.Rank, e.Addr, ctx.Err())
	case ctx.Err() != nil || errors.Is(err, errDeadline):
		return fmt.Errorf("rendezvous: rank %d: rank 0 at %s accepted the connection but never sent the payload within %v (are all ranks running?)", e.Rank, e.Addr, wait)
	case errors.Is(err, errNotRendezvous):
		return fmt.Errorf("rendezvous: rank %d: %s answered, but not as a cudago rendezvous rank 0 (another program on that port?): %v", e.Rank, e.Addr, err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return fmt.Errorf("rendezvous: rank %d: rank 0 at %s closed the connection before the exchange finished (did rank 0 exit?): %v", e.Rank, e.Addr, err)
	}
	return fmt.Errorf("rendezvous: rank %d: exchange with rank 0 at %s failed: %w", e.Rank, e.Addr, err)
}

// ---- messages ----

var (
	errNotRendezvous = errors.New("not a cudago rendezvous message")
	errDeadline      = errors.New("i/o timeout")
)

func putHeader(b []byte, kind uint16) {
	copy(b, magic[:])
	binary.BigEndian.PutUint16(b[4:], protoVersion)
	binary.BigEndian.PutUint16(b[6:], kind)
}

// writeMsg writes a payload or error message in one write.
func writeMsg(c net.Conn, kind uint16, body []byte) error {
	b := make([]byte, headerSize+4+len(body))
	putHeader(b, kind)
	binary.BigEndian.PutUint32(b[headerSize:], uint32(len(body)))
	copy(b[headerSize+4:], body)
	_, err := c.Write(b)
	return err
}

// readMsg reads rank 0's answer: a payload or an error message.
func readMsg(c net.Conn) (uint16, []byte, error) {
	var h [headerSize + 4]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return 0, nil, wrapTimeout(err)
	}
	if [4]byte(h[:4]) != magic {
		return 0, nil, fmt.Errorf("%w: it sent %q", errNotRendezvous, h[:])
	}
	version, kind := binary.BigEndian.Uint16(h[4:]), binary.BigEndian.Uint16(h[6:])
	n := int(binary.BigEndian.Uint32(h[headerSize:]))
	switch {
	case version != protoVersion:
		return 0, nil, fmt.Errorf("%w: rank 0 speaks rendezvous protocol %d, this rank %d (different cudago versions?)", errNotRendezvous, version, protoVersion)
	case kind == kindPayload && n <= MaxPayload, kind == kindError && n <= maxErrorMsg:
	default:
		return 0, nil, fmt.Errorf("%w: message kind %d of %d bytes", errNotRendezvous, kind, n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c, body); err != nil {
		return 0, nil, wrapTimeout(err)
	}
	return kind, body, nil
}

func wrapTimeout(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: %v", errDeadline, err)
	}
	return err
}

// ---- small helpers ----

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// rankList writes "rank 3" or "ranks 2, 3, 5".
func rankList(ranks []int) string {
	if len(ranks) == 1 {
		return "rank " + strconv.Itoa(ranks[0])
	}
	parts := make([]string, len(ranks))
	for i, r := range ranks {
		parts[i] = strconv.Itoa(r)
	}
	return "ranks " + strings.Join(parts, ", ")
}
