package rendezvous

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// noLeaks fails the test if it leaves goroutines behind.
func noLeaks(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(3 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				n := runtime.Stack(buf, true)
				t.Errorf("%d goroutines at the end, %d at the start:\n%s", runtime.NumGoroutine(), before, buf[:n])
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// freeAddr returns 127.0.0.1:port with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func randomPayload(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

type result struct {
	rank    int
	payload []byte
	err     error
	took    time.Duration
}

// runRanks runs Exchange for the given ranks in goroutines, rank 0 (when
// listed) after delay0, and returns the results indexed like ranks.
func runRanks(t *testing.T, timeout time.Duration, world int, addr string, payload []byte, delay0 time.Duration, ranks ...int) []result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res := make([]result, len(ranks))
	var wg sync.WaitGroup
	start := time.Now()
	for i, r := range ranks {
		wg.Go(func() {
			var p []byte
			if r == 0 {
				time.Sleep(delay0)
				p = payload
			}
			e := Env{Launcher: Cudago, Rank: r, WorldSize: world, LocalWorldSize: world, LocalRank: r, Addr: addr}
			got, err := e.Exchange(ctx, p)
			res[i] = result{rank: r, payload: got, err: err, took: time.Since(start)}
		})
	}
	wg.Wait()
	return res
}

func TestExchangeInProcess(t *testing.T) {
	noLeaks(t)
	for _, c := range []struct {
		name   string
		world  int
		size   int
		delay0 time.Duration
	}{
		{"8 ranks", 8, 128, 0},
		{"others first", 4, 128, 300 * time.Millisecond},
		{"2 ranks, empty payload", 2, 0, 0},
		{"3 ranks, MaxPayload", 3, MaxPayload, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			payload := randomPayload(t, c.size)
			ranks := make([]int, c.world)
			for i := range ranks {
				ranks[i] = i
			}
			for _, r := range runRanks(t, 3*time.Second, c.world, freeAddr(t), payload, c.delay0, ranks...) {
				if r.err != nil {
					t.Fatalf("rank %d: %v", r.rank, r.err)
				}
				if !bytes.Equal(r.payload, payload) || len(r.payload) != c.size {
					t.Fatalf("rank %d got %d bytes, not rank 0's %d", r.rank, len(r.payload), c.size)
				}
			}
		})
	}
}

func TestExchangeSingleRank(t *testing.T) {
	noLeaks(t)
	p := []byte("unique id")
	got, err := Env{Rank: 0, WorldSize: 1, LocalWorldSize: 1}.Exchange(context.Background(), p)
	if err != nil || string(got) != "unique id" {
		t.Fatalf("Exchange = %q, %v", got, err)
	}
	p[0] = 'X'
	if string(got) != "unique id" {
		t.Fatal("Exchange returned the caller's slice, not a copy")
	}
}

func TestExchangeMissingRank(t *testing.T) {
	noLeaks(t)
	addr, done := rank0(t, 4, 400*time.Millisecond, []byte("id"))
	// The others wait longer than rank 0: they hear from it why it gave up.
	res := runRanks(t, 3*time.Second, 4, addr, nil, 0, 1, 3)
	r0 := <-done
	if r0.err == nil || !strings.Contains(r0.err.Error(), "but rank 2 never connected (3 of 4 ranks arrived)") {
		t.Fatalf("rank 0: %v", r0.err)
	}
	if r0.took < 350*time.Millisecond || r0.took > 2*time.Second {
		t.Errorf("rank 0 gave up after %v with a 400ms deadline", r0.took)
	}
	for _, r := range res {
		if r.err == nil || !strings.Contains(r.err.Error(), "rank 0 gave up after") || !strings.Contains(r.err.Error(), "rank 2 never connected") {
			t.Errorf("rank %d: %v", r.rank, r.err)
		}
	}
}

func TestExchangeNeverAnswered(t *testing.T) {
	noLeaks(t)
	addr := freeAddr(t)
	res := runRanks(t, 400*time.Millisecond, 2, addr, nil, 0, 1)
	err := res[0].err
	if err == nil || !strings.Contains(err.Error(), "rank 1: rank 0 never answered at "+addr+" within") ||
		!strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("rank 1: %v", err)
	}
}

func TestExchangeTimeoutVariable(t *testing.T) {
	noLeaks(t)
	t.Setenv("CUDAGO_RENDEZVOUS_TIMEOUT", "300ms")
	start := time.Now()
	_, err := Env{Rank: 0, WorldSize: 2, Addr: freeAddr(t)}.Exchange(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "rank 1 never connected") {
		t.Fatalf("rank 0: %v", err)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 2*time.Second {
		t.Errorf("CUDAGO_RENDEZVOUS_TIMEOUT=300ms gave up after %v", d)
	}
	t.Setenv("CUDAGO_RENDEZVOUS_TIMEOUT", "later")
	_, err = Env{Rank: 1, WorldSize: 2, Addr: freeAddr(t)}.Exchange(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), `CUDAGO_RENDEZVOUS_TIMEOUT="later"`) {
		t.Fatalf("bad timeout: %v", err)
	}
}

func TestExchangeCancel(t *testing.T) {
	noLeaks(t)
	for _, rank := range []int{0, 1} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := Env{Rank: rank, WorldSize: 2, Addr: freeAddr(t)}.Exchange(ctx, nil)
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "canceled") {
			t.Errorf("rank %d: %v", rank, err)
		}
	}
}

func TestExchangeBadEnv(t *testing.T) {
	noLeaks(t)
	for _, c := range []struct {
		e       Env
		payload int
		err     string
	}{
		{Env{WorldSize: 0}, 0, "WorldSize 0 must be at least 1"},
		{Env{Rank: 4, WorldSize: 4, Addr: "h:1"}, 0, "Rank 4 is not from 0 to WorldSize-1 (3)"},
		{Env{Rank: -1, WorldSize: 4, Addr: "h:1"}, 0, "Rank -1 is not from 0"},
		{Env{Rank: 1, WorldSize: 4}, 0, `Addr="" is not host:port`},
		{Env{Rank: 0, WorldSize: 2, Addr: "h:99999"}, 0, `port "99999" is not from 1 to 65535`},
		{Env{Rank: 0, WorldSize: 2, Addr: "127.0.0.1:1"}, MaxPayload + 1, "payload of 1048577 bytes is larger than MaxPayload"},
		{Env{Rank: 0, WorldSize: 1}, MaxPayload + 1, "larger than MaxPayload"},
	} {
		_, err := c.e.Exchange(context.Background(), make([]byte, c.payload))
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: %v, want %q", c.e, err, c.err)
		}
	}
}

func TestExchangeListenFails(t *testing.T) {
	noLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = Env{Rank: 0, WorldSize: 2, Addr: ln.Addr().String()}.Exchange(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "rank 0 cannot listen on "+ln.Addr().String()) ||
		!strings.Contains(err.Error(), "address already in use (another program or job has the port: choose another with MASTER_PORT or CUDAGO_RENDEZVOUS_ADDR)") {
		t.Fatalf("rank 0 on a taken port: %v", err)
	}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:5":   "127.0.0.1:5",
		"127.0.1.1:5":   "127.0.1.1:5",
		"localhost:5":   "localhost:5",
		"[::1]:5":       "[::1]:5",
		"node0:5":       ":5",
		"10.0.0.1:5":    ":5",
		"[fe80::1]:5":   ":5",
		"node0.example": ":",
	} {
		if got := listenAddr(in); got != want {
			t.Errorf("listenAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

// dialRaw dials rank 0 until it listens.
func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	for range 200 {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			return c
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("nothing listens on %s", addr)
	return nil
}

func rawHello(version, kind uint16, rank, world uint32) []byte {
	b := make([]byte, helloSize)
	copy(b, "CGRV")
	binary.BigEndian.PutUint16(b[4:], version)
	binary.BigEndian.PutUint16(b[6:], kind)
	binary.BigEndian.PutUint32(b[8:], rank)
	binary.BigEndian.PutUint32(b[12:], world)
	return b
}

// rank0 runs rank 0 of world in a goroutine.
func rank0(t *testing.T, world int, timeout time.Duration, payload []byte) (addr string, done <-chan result) {
	t.Helper()
	addr = freeAddr(t)
	ch := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		start := time.Now()
		got, err := Env{Rank: 0, WorldSize: world, Addr: addr}.Exchange(ctx, payload)
		ch <- result{payload: got, err: err, took: time.Since(start)}
	}()
	return addr, ch
}

// TestExchangeStrays: connections that are not cudago ranks (garbage, an
// early close, silence, a wrong message kind) neither stop nor crash rank
// 0, and are closed when it returns.
func TestExchangeStrays(t *testing.T) {
	noLeaks(t)
	payload := randomPayload(t, 128)
	addr, done := rank0(t, 2, 3*time.Second, payload)

	garbage := dialRaw(t, addr)
	defer garbage.Close()
	garbage.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	closer := dialRaw(t, addr)
	closer.Write([]byte("CG"))
	closer.Close()
	silent := dialRaw(t, addr)
	defer silent.Close()
	wrongKind := dialRaw(t, addr)
	defer wrongKind.Close()
	wrongKind.Write(rawHello(protoVersion, kindAck, 1, 2))
	// The garbage is turned away: rank 0 closes that connection.
	garbage.SetReadDeadline(time.Now().Add(2 * time.Second))
	// (A reset when the unread rest of the request is dropped.)
	if n, err := io.ReadAll(garbage); len(n) != 0 || err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("rank 0 answered garbage with %q, %v; want a plain close", n, err)
	}

	res := runRanks(t, 3*time.Second, 2, addr, nil, 0, 1)
	if res[0].err != nil || !bytes.Equal(res[0].payload, payload) {
		t.Fatalf("rank 1 after the strays: %v", res[0].err)
	}
	r := <-done
	if r.err != nil || !bytes.Equal(r.payload, payload) {
		t.Fatalf("rank 0 after the strays: %v", r.err)
	}
	// The silent one is closed when rank 0 returns.
	silent.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := silent.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("silent stray after rank 0 returned: %v, want EOF", err)
	}
}

// TestExchangeStraysInTimeout: the timeout error mentions turned-away
// connections (a port shared by mistake shows up there).
func TestExchangeStraysInTimeout(t *testing.T) {
	noLeaks(t)
	addr, done := rank0(t, 2, 300*time.Millisecond, nil)
	c := dialRaw(t, addr)
	c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n"))
	defer c.Close()
	r := <-done
	if r.err == nil || !strings.Contains(r.err.Error(), "rank 1 never connected") ||
		!strings.Contains(r.err.Error(), "1 connection(s) were turned away as not cudago ranks") ||
		!strings.Contains(r.err.Error(), "SSH-2.0") {
		t.Fatalf("rank 0: %v", r.err)
	}
}

// TestExchangeBadHello: a cudago rank that cannot take part fails the
// rendezvous at once, and is told why.
func TestExchangeBadHello(t *testing.T) {
	noLeaks(t)
	for _, c := range []struct {
		name  string
		hello []byte
		err   string
	}{
		{"world size", rawHello(protoVersion, kindHello, 1, 2), "rank 1 at 127.0.0.1:"},
		{"rank 0 twice", rawHello(protoVersion, kindHello, 0, 3), "says it is rank 0, not from 1 to 2"},
		{"rank out of range", rawHello(protoVersion, kindHello, 7, 3), "says it is rank 7, not from 1 to 2"},
		{"version", rawHello(99, kindHello, 1, 3), "speaks rendezvous protocol 99, rank 0 speaks 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, done := rank0(t, 3, 3*time.Second, []byte("id"))
			conn := dialRaw(t, addr)
			defer conn.Close()
			conn.Write(c.hello)
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			kind, body, err := readMsg(conn)
			if err != nil || kind != kindError || !strings.Contains(string(body), c.err) {
				t.Fatalf("answer %d %q, %v; want an error with %q", kind, body, err, c.err)
			}
			r := <-done
			if r.err == nil || !strings.Contains(r.err.Error(), c.err) || r.took > 2*time.Second {
				t.Fatalf("rank 0 after %v: %v", r.took, r.err)
			}
		})
	}
}

func TestExchangeWorldSizeMismatch(t *testing.T) {
	noLeaks(t)
	addr, done := rank0(t, 3, 3*time.Second, []byte("id"))
	res := runRanks(t, 3*time.Second, 2, addr, nil, 0, 1)
	want := "has world size 2, rank 0 has 3"
	if err := res[0].err; err == nil || !strings.Contains(err.Error(), "rank 1: rank 0 at "+addr+" answered: rank 1 at") || !strings.Contains(err.Error(), want) {
		t.Fatalf("rank 1: %v", err)
	}
	if r := <-done; r.err == nil || !strings.Contains(r.err.Error(), want) || r.took > 2*time.Second {
		t.Fatalf("rank 0 after %v: %v", r.took, r.err)
	}
}

// TestExchangeDuplicateRank: two processes that both say rank 1 fail the
// rendezvous; the one rank 0 already held is told too.
func TestExchangeDuplicateRank(t *testing.T) {
	noLeaks(t)
	addr, done := rank0(t, 3, 3*time.Second, []byte("id"))
	first := dialRaw(t, addr)
	defer first.Close()
	first.Write(rawHello(protoVersion, kindHello, 1, 3))
	time.Sleep(100 * time.Millisecond) // registered before the second
	res := runRanks(t, 3*time.Second, 3, addr, nil, 0, 1)
	if err := res[0].err; err == nil || !strings.Contains(err.Error(), "rank 1 connected twice") {
		t.Fatalf("second rank 1: %v", err)
	}
	if r := <-done; r.err == nil || !strings.Contains(r.err.Error(), "rank 1 connected twice, from 127.0.0.1:") {
		t.Fatalf("rank 0: %v", r.err)
	}
	first.SetReadDeadline(time.Now().Add(2 * time.Second))
	kind, body, err := readMsg(first)
	if err != nil || kind != kindError || !strings.Contains(string(body), "rank 0 gave up: rank 1 connected twice") {
		t.Fatalf("first rank 1 was told %d %q, %v", kind, body, err)
	}
}

// TestExchangeRankReconnects: a rank that leaves before the payload is
// forgotten, and the same rank may come again.
func TestExchangeRankReconnects(t *testing.T) {
	noLeaks(t)
	payload := []byte("the id")
	addr, done := rank0(t, 3, 3*time.Second, payload)
	early := dialRaw(t, addr)
	early.Write(rawHello(protoVersion, kindHello, 2, 3))
	time.Sleep(100 * time.Millisecond)
	early.Close()
	time.Sleep(100 * time.Millisecond)
	for _, r := range runRanks(t, 3*time.Second, 3, addr, nil, 0, 1, 2) {
		if r.err != nil || !bytes.Equal(r.payload, payload) {
			t.Fatalf("rank %d: %q, %v", r.rank, r.payload, r.err)
		}
	}
	if r := <-done; r.err != nil {
		t.Fatalf("rank 0: %v", r.err)
	}
}

// TestExchangeRankLeft: rank 0's timeout error tells a rank that came and
// went from one that never came.
func TestExchangeRankLeft(t *testing.T) {
	noLeaks(t)
	addr, done := rank0(t, 3, 400*time.Millisecond, nil)
	c := dialRaw(t, addr)
	c.Write(rawHello(protoVersion, kindHello, 2, 3))
	time.Sleep(100 * time.Millisecond)
	c.Close()
	if r := <-done; r.err == nil || !strings.Contains(r.err.Error(), "rank 1 never connected; rank 2 connected but left (EOF) (1 of 3 ranks arrived)") {
		t.Fatalf("rank 0: %v", r.err)
	}
}

// TestExchangeNoAck: rank 0 reports a rank that took the payload but
// never acknowledged it.
func TestExchangeNoAck(t *testing.T) {
	noLeaks(t)
	addr, done := rank0(t, 2, 3*time.Second, []byte("id"))
	c := dialRaw(t, addr)
	c.Write(rawHello(protoVersion, kindHello, 1, 2))
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if kind, body, err := readMsg(c); err != nil || kind != kindPayload || string(body) != "id" {
		t.Fatalf("payload: %d %q %v", kind, body, err)
	}
	c.Close()
	if r := <-done; r.err == nil || !strings.Contains(r.err.Error(), "the connection of rank 1 (EOF) broke before it acknowledged") {
		t.Fatalf("rank 0: %v", r.err)
	}
}

// fakeRank0 accepts one connection and hands it to serve.
func fakeRank0(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		serve(c)
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return ln.Addr().String()
}

func TestExchangeRank0Misbehaves(t *testing.T) {
	noLeaks(t)
	for _, c := range []struct {
		name  string
		serve func(net.Conn)
		err   string
	}{
		{"closes", func(c net.Conn) { io.ReadFull(c, make([]byte, helloSize)) },
			"closed the connection before the exchange finished (did rank 0 exit?): EOF"},
		{"closes mid-message", func(c net.Conn) {
			io.ReadFull(c, make([]byte, helloSize))
			b := make([]byte, headerSize+4+3)
			putHeader(b, kindPayload)
			binary.BigEndian.PutUint32(b[headerSize:], 128)
			c.Write(b)
		}, "closed the connection before the exchange finished (did rank 0 exit?): unexpected EOF"},
		{"another program", func(c net.Conn) {
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			io.ReadFull(c, make([]byte, helloSize))
		}, "answered, but not as a cudago rendezvous rank 0 (another program on that port?)"},
		{"huge payload", func(c net.Conn) {
			b := make([]byte, headerSize+4)
			putHeader(b, kindPayload)
			binary.BigEndian.PutUint32(b[headerSize:], MaxPayload+1)
			c.Write(b)
			io.ReadFull(c, make([]byte, helloSize))
		}, "message kind 2 of 1048577 bytes"},
		{"newer protocol", func(c net.Conn) {
			b := make([]byte, headerSize+4)
			putHeader(b, kindPayload)
			binary.BigEndian.PutUint16(b[4:], 2)
			c.Write(b)
			io.ReadFull(c, make([]byte, helloSize))
		}, "rank 0 speaks rendezvous protocol 2, this rank 1"},
		{"silent", func(c net.Conn) {
			io.ReadFull(c, make([]byte, helloSize))
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			c.Read(make([]byte, 1))
		}, "accepted the connection but never sent the payload within"},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := fakeRank0(t, c.serve)
			res := runRanks(t, 300*time.Millisecond, 2, addr, nil, 0, 1)
			if err := res[0].err; err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), addr) {
				t.Fatalf("rank 1: %v; want %q", err, c.err)
			}
		})
	}
}

// TestExchangeConcurrent: independent rendezvous at once in one process
// (each with its own address) do not disturb each other.
func TestExchangeConcurrent(t *testing.T) {
	noLeaks(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			payload := randomPayload(t, 128)
			for _, r := range runRanks(t, 3*time.Second, 3, freeAddr(t), payload, 0, 0, 1, 2) {
				if r.err != nil || !bytes.Equal(r.payload, payload) {
					t.Errorf("rank %d: %v", r.rank, r.err)
				}
			}
		})
	}
	wg.Wait()
}
