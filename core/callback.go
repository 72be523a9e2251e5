package core

/*
#include <stdint.h>
*/
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cudago/cudago/bindings/driver"
)

// Host callbacks: the C layer registers one trampoline with
// cuStreamAddCallback (which also runs, with the error, when the stream
// failed) or cuLaunchHostFunc, and passes a callback id as user data; the
// trampoline calls cudagoHostCallback on a driver thread. Callbacks must
// not call CUDA, so none of these does.
//
// The ids work like cgo.Handle, but an id that is no longer registered is
// ignored instead of panicking: a graph's host function may still run
// after its GraphExec was closed (the driver frees it on completion).

type hostCallback interface {
	// run handles one call; it reports whether the handle must be kept
	// for more calls (a host function captured into a graph).
	run(status driver.Result) (keep bool)
}

var callbacks struct {
	next atomic.Uintptr
	m    sync.Map // uintptr -> hostCallback
}

func registerCallback(cb hostCallback) uintptr {
	id := callbacks.next.Add(1)
	callbacks.m.Store(id, cb)
	return id
}

func deleteCallback(id uintptr) { callbacks.m.Delete(id) }

//export cudagoHostCallback
func cudagoHostCallback(h C.uintptr_t, status C.int) {
	runCallback(uintptr(h), driver.Result(status))
}

func runCallback(id uintptr, status driver.Result) {
	v, ok := callbacks.m.Load(id)
	if !ok {
		return
	}
	if !v.(hostCallback).run(status) {
		deleteCallback(id)
	}
}

// doneCallback delivers a stream's completion to a channel.
type doneCallback chan error

func (c doneCallback) run(status driver.Result) bool {
	if status != driver.Success {
		// No cuGetErrorString here: a host callback must not call CUDA.
		// The error's text falls back to the header's explanation.
		c <- &driver.Error{Lib: "driver", Func: "cuStreamAddCallback", Code: status}
	} else {
		c <- nil
	}
	close(c)
	return false
}

// pinCallback releases Go memory pinned for an asynchronous copy.
type pinCallback struct{ p *runtime.Pinner }

func (c pinCallback) run(driver.Result) bool {
	c.p.Unpin()
	return false
}

// funcCallback runs a user function (LaunchHostFunc) once.
type funcCallback func()

func (f funcCallback) run(driver.Result) bool {
	f()
	return false
}

// graphFunc is a user function captured into a graph: it runs at every
// launch of the graph, so its handle lives until the graph and every
// GraphExec made from it are closed (graphHandles).
type graphFunc func()

func (f graphFunc) run(driver.Result) bool {
	f()
	return true
}

// graphHandles holds the handles a graph needs, shared by the Graph and
// its GraphExecs; the last one closed deletes them. It also keeps what the
// nodes of a built graph use (Buffers, Kernels, Events) from being
// collected, and the graphHandles of the graphs cloned into it as child
// graphs, whose host functions it runs too.
type graphHandles struct {
	mu   sync.Mutex
	refs int
	hs   []uintptr
	keep []any
	subs []*graphHandles
}

func (g *graphHandles) add(h uintptr) {
	g.mu.Lock()
	g.hs = append(g.hs, h)
	g.mu.Unlock()
}

// hold keeps vs (nil entries are skipped) for the life of g.
func (g *graphHandles) hold(vs ...any) {
	g.mu.Lock()
	for _, v := range vs {
		if v != nil {
			g.keep = append(g.keep, v)
		}
	}
	g.mu.Unlock()
}

// addSub makes g hold a reference to sub.
func (g *graphHandles) addSub(sub *graphHandles) {
	if sub == nil || sub == g {
		return
	}
	sub.ref()
	g.mu.Lock()
	g.subs = append(g.subs, sub)
	g.mu.Unlock()
}

func (g *graphHandles) ref() *graphHandles {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	g.refs++
	g.mu.Unlock()
	return g
}

func (g *graphHandles) unref() {
	if g == nil {
		return
	}
	g.mu.Lock()
	var subs []*graphHandles
	if g.refs--; g.refs == 0 {
		for _, h := range g.hs {
			deleteCallback(h)
		}
		g.hs, g.keep, subs, g.subs = nil, nil, g.subs, nil
	}
	g.mu.Unlock()
	for _, s := range subs { // outside g.mu: a sub may be shared
		s.unref()
	}
}
