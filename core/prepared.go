package core

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// PreparedLaunch is a kernel launch whose shape and arguments were
// checked and packed once (Kernel.Prepare): each Launch is then the
// use-after-close guards and one cgo call, with nothing to convert,
// check or pack. Arguments and the shape may be changed between launches
// (SetArg, SetConfig), with the same checks as Launch.
//
// A PreparedLaunch is safe for concurrent use: launches from several
// goroutines run side by side, and SetArg or SetConfig waits for the
// launches in progress, so every launch sees one consistent set of
// arguments. The driver copies the arguments when it queues a launch, so
// changing them never affects launches already queued.
//
// A *Buffer argument is kept referenced (it is not collected while the
// PreparedLaunch holds it) and checked at every launch: closing it makes
// the next Launch fail with ErrClosed rather than run on freed memory.
type PreparedLaunch struct {
	k   *Kernel
	lay *paramLayout

	mu      sync.RWMutex // read: Launch; write: SetArg, SetConfig, Close
	c       *cPrepared   // C memory (nil once closed)
	bufs    []*Buffer    // the *Buffer arguments, by index (nil for others)
	anyBuf  bool
	cleanup runtime.Cleanup
}

// Prepare checks cfg and args as Launch does and packs them once, for
// launching many times with PreparedLaunch.Launch. Close frees it (a
// forgotten one is freed when collected).
func (k *Kernel) Prepare(cfg LaunchConfig, args ...any) (*PreparedLaunch, error) {
	if k == nil {
		return nil, errors.New("core: Prepare: nil *Kernel")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("core: Prepare %s: %w", k.name, err)
	}
	if _, err := k.Arguments(); err != nil { // loads the layout once
		return nil, fmt.Errorf("core: Prepare %s: %w", k.name, err)
	}
	lay := k.layout()
	buf := make([]byte, lay.size)
	if err := packArgsAt(buf, "Prepare", k.name, lay.params, args, 0); err != nil {
		return nil, err
	}
	cp := cPreparedNew(lay.size)
	if cp == nil {
		return nil, fmt.Errorf("core: Prepare %s: out of host memory for %d bytes of arguments", k.name, lay.size)
	}
	copy(cPreparedArgs(cp), buf)
	cPreparedSet(cp, k.handle, &cfg)
	p := &PreparedLaunch{k: k, lay: lay, c: cp, bufs: make([]*Buffer, len(args))}
	for i, a := range args {
		if b, ok := a.(*Buffer); ok {
			p.bufs[i], p.anyBuf = b, true
		}
	}
	p.cleanup = runtime.AddCleanup(p, cPreparedFree, p.c)
	return p, nil
}

// Kernel returns the kernel it launches.
func (p *PreparedLaunch) Kernel() *Kernel { return p.k }

// Launch queues the prepared launch on stream.
func (p *PreparedLaunch) Launch(stream *Stream) error {
	if p == nil || p.k == nil {
		return errNotPrepared
	}
	if stream == nil {
		return fmt.Errorf("core: PreparedLaunch %s: nil *Stream", p.k.name)
	}
	if !p.k.acquire() {
		return fmt.Errorf("core: PreparedLaunch %s: its ObjectCode is closed: %w", p.k.name, ErrClosed)
	}
	h, err := stream.acquire()
	if err != nil {
		p.k.release()
		return err
	}
	p.mu.RLock()
	if p.c == nil {
		err = fmt.Errorf("core: PreparedLaunch %s: %w", p.k.name, ErrClosed)
	} else if p.anyBuf {
		err = p.checkBuffers()
	}
	if err == nil {
		err = cLaunchPrepared(h, stream.handle, uintptr(unsafe.Pointer(p.c)))
	}
	p.mu.RUnlock()
	stream.release()
	p.k.release()
	return err
}

var errNotPrepared = errors.New("core: PreparedLaunch: nil, or not made by Kernel.Prepare")

// checkBuffers refuses closed Buffer arguments. As with Launch, a Buffer
// closed by another goroutine between this check and the launch is the
// caller's race: the arguments are checked, not held.
func (p *PreparedLaunch) checkBuffers() error {
	for i, b := range p.bufs {
		if b != nil && b.closed() {
			return fmt.Errorf("core: PreparedLaunch %s: argument %d: %w", p.k.name, i, ErrClosed)
		}
	}
	return nil
}

// SetArg replaces argument i, checked as Launch checks it; launches
// queued before keep the old value.
func (p *PreparedLaunch) SetArg(i int, v any) error {
	if p == nil || p.k == nil {
		return errNotPrepared
	}
	if i < 0 || i >= len(p.lay.params) {
		return fmt.Errorf("core: PreparedLaunch.SetArg %s: argument %d out of range: the kernel takes %d", p.k.name, i, len(p.lay.params))
	}
	pi := p.lay.params[i]
	// Packed into a zeroed scratch first, so a rejected value leaves the
	// old one in place.
	var small [16]byte
	var d []byte
	if pi.Size <= len(small) {
		d = small[:pi.Size]
	} else {
		d = make([]byte, pi.Size)
	}
	if err := packArgsAt(d, "PreparedLaunch.SetArg", p.k.name, []ArgumentInfo{{Size: pi.Size}}, []any{v}, i); err != nil {
		return err
	}
	b, _ := v.(*Buffer)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.c == nil {
		return fmt.Errorf("core: PreparedLaunch.SetArg %s: %w", p.k.name, ErrClosed)
	}
	copy(cPreparedArgs(p.c)[pi.Offset:], d)
	p.bufs[i] = b
	p.anyBuf = false
	for _, b := range p.bufs {
		p.anyBuf = p.anyBuf || b != nil
	}
	return nil
}

// SetConfig replaces the launch's shape, checked as Launch checks it.
func (p *PreparedLaunch) SetConfig(cfg LaunchConfig) error {
	if p == nil || p.k == nil {
		return errNotPrepared
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("core: PreparedLaunch.SetConfig %s: %w", p.k.name, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.c == nil {
		return fmt.Errorf("core: PreparedLaunch.SetConfig %s: %w", p.k.name, ErrClosed)
	}
	cPreparedSet(p.c, p.k.handle, &cfg)
	return nil
}

// Close frees the prepared launch; later calls fail with ErrClosed.
// Launches already queued are not affected. Close is idempotent.
func (p *PreparedLaunch) Close() error {
	if p == nil || p.k == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.c == nil {
		return nil
	}
	p.cleanup.Stop()
	cPreparedFree(p.c)
	p.c = nil
	p.bufs = nil
	p.anyBuf = false
	return nil
}
