package core

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/cudago/cudago/bindings/driver"
)

// CaptureMode is how strictly a stream capture guards against unsafe
// driver calls made while it runs.
//
// Goroutines share OS threads, and the driver ties the Global and
// ThreadLocal modes to the thread that began the capture (EndCapture must
// run on it, and other captures on it are restricted). CaptureRelaxed,
// the zero value, has no such tie and is what Go code should use; the
// others need the capturing goroutine to hold runtime.LockOSThread from
// BeginCapture to EndCapture.
type CaptureMode int

const (
	CaptureRelaxed     CaptureMode = iota // CU_STREAM_CAPTURE_MODE_RELAXED
	CaptureThreadLocal                    // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
	CaptureGlobal                         // CU_STREAM_CAPTURE_MODE_GLOBAL
)

func (m CaptureMode) driver() (driver.StreamCaptureMode, error) {
	switch m {
	case CaptureRelaxed:
		return driver.StreamCaptureModeRelaxed, nil
	case CaptureThreadLocal:
		return driver.StreamCaptureModeThreadLocal, nil
	case CaptureGlobal:
		return driver.StreamCaptureModeGlobal, nil
	}
	return 0, fmt.Errorf("core: unknown CaptureMode %d", int(m))
}

// BeginCapture starts capturing the work queued on s into a graph instead
// of running it, until EndCapture. The default streams cannot capture.
func (s *Stream) BeginCapture(mode CaptureMode) error {
	m, err := mode.driver()
	if err != nil {
		return err
	}
	h, err := s.acquire()
	if err != nil {
		return err
	}
	defer s.release()
	g := &graphHandles{}
	if !s.capture.CompareAndSwap(nil, g) {
		return fmt.Errorf("core: BeginCapture: %v is capturing already", s)
	}
	if err := cuStreamBeginCapture(h, s.handle, m); err != nil {
		s.capture.Store(nil)
		return err
	}
	return nil
}

// EndCapture ends the capture BeginCapture started and returns the graph.
func (s *Stream) EndCapture() (*Graph, error) {
	h, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer s.release()
	gh := s.capture.Swap(nil).ref()
	g, err := cuStreamEndCapture(h, s.handle)
	if err != nil {
		gh.unref()
		return nil, err
	}
	return newGraph(g, s.ctx, gh), nil
}

// Graph is a graph of GPU work: captured from a stream (EndCapture) or
// built node by node (NewGraph and the node methods of graphdef.go).
// Instantiate it to launch it.
type Graph struct {
	handle  driver.Graph
	ctx     *Context
	hs      *graphHandles // host functions and resources its nodes use
	life    life
	cleanup runtime.Cleanup

	// A body of a conditional node belongs to the top-level graph that
	// holds it (top; nil for a top-level graph), whose life and lock it
	// uses, and parent is the graph that holds its conditional node.
	top    *Graph
	parent *Graph
	// mu serializes the driver calls on a top-level graph and its bodies:
	// CUDA graphs are not thread-safe.
	mu sync.Mutex
	// conds are the conditional handles made on this graph: true once a
	// conditional node uses it (guarded by top.mu).
	conds map[driver.GraphConditionalHandle]bool
}

type graphRef struct {
	handleRef[driver.Graph]
	hs *graphHandles
}

func newGraph(h driver.Graph, ctx *Context, hs *graphHandles) *Graph {
	g := &Graph{handle: h, ctx: ctx, hs: hs}
	g.cleanup = runtime.AddCleanup(g, func(r graphRef) {
		destroyForgotten(r.ctx, "graph", r.h, cuGraphDestroy)
		r.hs.unref()
	}, graphRef{handleRef[driver.Graph]{ctx, h}, hs})
	return g
}

// Handle returns the driver's CUgraph.
func (g *Graph) Handle() driver.Graph { return g.handle }

// Close destroys the graph (GraphExecs made from it stay usable); later
// calls return ErrClosed, closing twice is not an error. The body of a
// conditional node is destroyed with its top-level graph: its Close does
// nothing.
func (g *Graph) Close() error {
	if g.top != nil || !g.life.close() {
		return nil
	}
	defer g.hs.unref()
	return destroyClosed(g.ctx, &g.cleanup, g.handle, cuGraphDestroy)
}

// InstantiateOptions configure Graph.InstantiateWith.
type InstantiateOptions struct {
	// AutoFreeOnLaunch makes each launch free the graph allocations (Alloc
	// nodes, GraphMemoryResource) that the previous launch left unfreed;
	// without it, a graph that does not free its allocations cannot be
	// launched again until they are freed.
	AutoFreeOnLaunch bool
	// UseNodePriority runs the kernel nodes at their own priorities
	// instead of the priority of the stream the graph is launched on.
	UseNodePriority bool
}

// Instantiate makes an executable graph of g.
func (g *Graph) Instantiate() (*GraphExec, error) { return g.InstantiateWith(nil) }

// InstantiateWith makes an executable graph of g with options o. Only a
// top-level graph is instantiated: the bodies of its conditional nodes
// come with it.
func (g *Graph) InstantiateWith(options *InstantiateOptions) (*GraphExec, error) {
	o := optsOf(options)
	if g.top != nil {
		return nil, errors.New("core: Graph.Instantiate: the body of a conditional node is instantiated with the graph that holds it")
	}
	var flags uint64
	if o.AutoFreeOnLaunch {
		flags |= uint64(driver.GraphInstantiateFlagAutoFreeOnLaunch)
	}
	if o.UseNodePriority {
		flags |= uint64(driver.GraphInstantiateFlagUseNodePriority)
	}
	h, err := g.enter("Graph.Instantiate")
	if err != nil {
		return nil, err
	}
	defer g.exit()
	eh, err := cuGraphInstantiateWithFlags(h, g.handle, flags)
	if err != nil {
		return nil, err
	}
	e := &GraphExec{handle: eh, ctx: g.ctx, hs: &handleSet{hs: []*graphHandles{g.hs.ref()}}, src: g}
	e.cleanup = runtime.AddCleanup(e, func(r graphExecRef) {
		destroyForgotten(r.ctx, "executable graph", r.h, cuGraphExecDestroy)
		r.hs.unref()
	}, graphExecRef{handleRef[driver.GraphExec]{g.ctx, eh}, e.hs})
	return e, nil
}

// GraphExec is an executable graph: launch it on a stream as often as
// needed.
type GraphExec struct {
	handle  driver.GraphExec
	ctx     *Context
	hs      *handleSet
	life    life
	cleanup runtime.Cleanup
	src     *Graph // the graph it was instantiated from, whose nodes SetKernel takes
	// mu serializes the driver calls on the executable graph (not
	// thread-safe in CUDA); keep holds, by node, the resources of the
	// arguments SetKernel set last.
	mu   sync.Mutex
	keep map[driver.GraphNode][]any
	prev map[driver.GraphNode]int // how many of keep[n] the latest SetKernel gave
}

// handleSet is the graphHandles a GraphExec holds: its graph's, and those
// of the graphs it was updated with.
type handleSet struct {
	mu sync.Mutex
	hs []*graphHandles
}

func (s *handleSet) add(g *graphHandles) {
	if g == nil {
		return
	}
	s.mu.Lock()
	s.hs = append(s.hs, g.ref())
	s.mu.Unlock()
}

func (s *handleSet) unref() {
	s.mu.Lock()
	hs := s.hs
	s.hs = nil
	s.mu.Unlock()
	for _, g := range hs {
		g.unref()
	}
}

type graphExecRef struct {
	handleRef[driver.GraphExec]
	hs *handleSet
}

// Handle returns the driver's CUgraphExec.
func (e *GraphExec) Handle() driver.GraphExec { return e.handle }

// acquireWith acquires e and the stream s for a driver call; every
// successful acquireWith needs a releaseWith.
func (e *GraphExec) acquireWith(s *Stream) (driver.Context, error) {
	if !e.life.acquire() {
		return 0, ErrClosed
	}
	h, err := s.acquire()
	if err != nil {
		e.life.release()
	}
	return h, err
}

func (e *GraphExec) releaseWith(s *Stream) {
	s.release()
	e.life.release()
}

// Launch queues the whole graph on stream.
func (e *GraphExec) Launch(stream *Stream) error {
	return e.onStream(stream, cuGraphLaunch)
}

// Upload prepares the graph's resources on stream ahead of its first
// Launch.
func (e *GraphExec) Upload(stream *Stream) error {
	return e.onStream(stream, cuGraphUpload)
}

// onStream makes the driver call of Launch or Upload, holding e and
// stream.
func (e *GraphExec) onStream(stream *Stream, call func(driver.Context, driver.GraphExec, driver.Stream) error) error {
	h, err := e.acquireWith(stream)
	if err != nil {
		return err
	}
	defer e.releaseWith(stream)
	e.mu.Lock()
	defer e.mu.Unlock()
	return call(h, e.handle, stream.handle)
}

// Update replaces the parameters of e's nodes with those of g, which must
// have the same topology (cuGraphExecUpdate); e then launches g's work.
func (e *GraphExec) Update(g *Graph) error {
	if !e.life.acquire() {
		return ErrClosed
	}
	defer e.life.release()
	if g.top != nil {
		return errors.New("core: GraphExec.Update: the body of a conditional node cannot stand for a whole graph")
	}
	if !g.life.acquire() {
		return ErrClosed
	}
	defer g.life.release()
	h, err := e.ctx.acquire()
	if err != nil {
		return err
	}
	defer e.ctx.release()
	g.mu.Lock()
	defer g.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	info, err := cuGraphExecUpdate(h, e.handle, g.handle)
	if err != nil {
		return fmt.Errorf("core: GraphExec.Update: %w (update result %d)", err, info.Result)
	}
	// e now runs g's host functions too: keep them for e's life.
	e.hs.add(g.hs)
	return nil
}

// Close destroys the executable graph; later calls return ErrClosed,
// closing twice is not an error.
func (e *GraphExec) Close() error {
	if !e.life.close() {
		return nil
	}
	defer e.hs.unref()
	return destroyClosed(e.ctx, &e.cleanup, e.handle, cuGraphExecDestroy)
}
