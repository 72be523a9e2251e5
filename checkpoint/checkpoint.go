package checkpoint

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/cudago/cudago/bindings/driver"
)

// ErrNotSupported is matched (errors.Is) by the error of a call the driver
// cannot make here: it lacks the checkpoint API (a driver older than CUDA
// 12.8), or refuses it on this system (CUDA_ERROR_NOT_SUPPORTED).
var ErrNotSupported = errors.New("CUDA checkpoints are not supported")

// ErrNotPermitted is matched (errors.Is) by the error of a call the driver
// does not permit this caller (CUDA_ERROR_NOT_PERMITTED).
var ErrNotPermitted = errors.New("not permitted")

// ErrTimeout is matched (errors.Is) by the error of a Lock whose timeout
// passed first (CUDA_ERROR_NOT_READY); the process is left Running.
var ErrTimeout = errors.New("timed out")

// State is where a process is in the checkpoint cycle
// (CUprocessState).
type State int

const (
	Running      State = State(driver.ProcessStateRunning)      // its CUDA calls run
	Locked       State = State(driver.ProcessStateLocked)       // its CUDA calls block (Lock, Restore)
	Checkpointed State = State(driver.ProcessStateCheckpointed) // its GPU memory is on the host and its GPUs are released (Checkpoint)
	Failed       State = State(driver.ProcessStateFailed)       // a checkpoint or restore failed beyond repair
)

// String returns "running", "locked", "checkpointed" or "failed", as
// cuda.core names them.
func (s State) String() string {
	switch s {
	case Running:
		return "running"
	case Locked:
		return "locked"
	case Checkpointed:
		return "checkpointed"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Process is a CUDA process, named by its process id, whose GPU state can
// be locked, checkpointed, restored and unlocked (cuda.core's
// checkpoint.Process). A Process holds nothing: it may be copied, used
// from several goroutines, and outlived by its process (the calls then
// fail).
type Process struct{ pid int }

// NewProcess returns the Process of pid, which must be a running process
// (not necessarily one using CUDA: State fails on one that is not).
func NewProcess(pid int) (*Process, error) {
	if pid <= 0 || pid > math.MaxInt32 {
		return nil, fmt.Errorf("checkpoint: NewProcess(%d): not a process id", pid)
	}
	if err := processExists(pid); err != nil {
		return nil, fmt.Errorf("checkpoint: NewProcess(%d): %w", pid, err)
	}
	return &Process{pid: pid}, nil
}

// PID returns the process id.
func (p *Process) PID() int {
	if p == nil {
		return 0
	}
	return p.pid
}

// String returns "process 1234".
func (p *Process) String() string {
	if p == nil {
		return "process <nil>"
	}
	return fmt.Sprintf("process %d", p.pid)
}

// LockOptions are Lock's options; nil means the defaults.
type LockOptions struct {
	// Timeout bounds the wait for the process to be lockable (it must
	// finish the CUDA calls it is in); past it Lock fails with ErrTimeout
	// and the process stays Running. 0 waits as long as it takes. The
	// driver counts whole milliseconds: a Timeout is rounded up to one.
	Timeout time.Duration
}

// RestoreOptions are Restore's options; nil means the defaults.
type RestoreOptions struct {
	// GPUs remaps the process's GPUs: each pair puts the state of the GPU
	// Old had at checkpoint time on GPU New. Without pairs every GPU comes
	// back where it was. With pairs, every GPU the process had must have
	// one, and a New GPU must be of Old's kind with room for its memory.
	// NVIDIA's advice for migration: pair every GPU the kernel driver
	// sees, whatever CUDA_VISIBLE_DEVICES hid from the process.
	GPUs []GPUPair
}

// GPUPair maps the GPU of UUID Old to the GPU of UUID New, in Restore.
// UUIDs are written as core.Device.UUID gives them
// ("a1b2c3d4-...-..."), or as nvidia-smi does ("GPU-a1b2c3d4-...").
type GPUPair struct{ Old, New string }

// State returns where the process is in the checkpoint cycle
// (cuCheckpointProcessGetState).
func (p *Process) State() (State, error) {
	var s driver.ProcessState
	err := p.call("State", "cuCheckpointProcessGetState", func() (err error) {
		s, err = driver.CheckpointProcessGetState(int32(p.pid))
		return err
	})
	return State(s), err
}

// RestoreThreadID returns the id of the thread of the process that the
// driver restores it with (cuCheckpointProcessGetRestoreThreadId).
func (p *Process) RestoreThreadID() (int, error) {
	var tid int32
	err := p.call("RestoreThreadID", "cuCheckpointProcessGetRestoreThreadId", func() (err error) {
		tid, err = driver.CheckpointProcessGetRestoreThreadId(int32(p.pid))
		return err
	})
	return int(tid), err
}

// Lock locks a Running process (cuCheckpointProcessLock): once the CUDA
// calls it is in are done, its further ones block, until Unlock. The
// process is then Locked.
func (p *Process) Lock(opts *LockOptions) error {
	var args driver.CheckpointLockArgs
	if opts != nil {
		if opts.Timeout < 0 {
			return fmt.Errorf("checkpoint: Lock %v: LockOptions.Timeout %v is negative", p, opts.Timeout)
		}
		ms := (opts.Timeout + time.Millisecond - 1) / time.Millisecond
		if ms > math.MaxUint32 {
			return fmt.Errorf("checkpoint: Lock %v: LockOptions.Timeout %v is more than the driver takes (%v)", p, opts.Timeout, time.Duration(math.MaxUint32)*time.Millisecond)
		}
		args.TimeoutMs = uint32(ms)
	}
	return p.call("Lock", "cuCheckpointProcessLock", func() error {
		return driver.CheckpointProcessLock(int32(p.pid), &args)
	})
}

// Checkpoint checkpoints a Locked process (cuCheckpointProcessCheckpoint):
// the driver waits for its GPU work, copies its GPU memory into host
// memory and releases its GPUs. The process is then Checkpointed.
func (p *Process) Checkpoint() error {
	var args driver.CheckpointCheckpointArgs
	return p.call("Checkpoint", "cuCheckpointProcessCheckpoint", func() error {
		return driver.CheckpointProcessCheckpoint(int32(p.pid), &args)
	})
}

// Restore restores a Checkpointed process from its checkpoint
// (cuCheckpointProcessRestore), on its GPUs or, with opts.GPUs, on
// others. The process is then Locked: Unlock lets it go on. The driver
// restores only where persistence mode is on or the caller has called
// cuInit, which this package does.
func (p *Process) Restore(opts *RestoreOptions) error {
	var args driver.CheckpointRestoreArgs
	var pin runtime.Pinner
	defer pin.Unpin()
	if opts != nil && len(opts.GPUs) > 0 {
		pairs := make([]driver.CheckpointGpuPair, len(opts.GPUs))
		seen := map[driver.Uuid]int{}
		for i, g := range opts.GPUs {
			var err error
			if pairs[i].OldUuid, err = parseUUID(g.Old); err != nil {
				return fmt.Errorf("checkpoint: Restore %v: RestoreOptions.GPUs[%d].Old: %v", p, i, err)
			}
			if pairs[i].NewUuid, err = parseUUID(g.New); err != nil {
				return fmt.Errorf("checkpoint: Restore %v: RestoreOptions.GPUs[%d].New: %v", p, i, err)
			}
			if j, dup := seen[pairs[i].OldUuid]; dup {
				return fmt.Errorf("checkpoint: Restore %v: RestoreOptions.GPUs[%d] and [%d] both map GPU %s", p, j, i, g.Old)
			}
			seen[pairs[i].OldUuid] = i
		}
		// The driver reads the pairs through a pointer in args, which cgo
		// allows only for pinned memory.
		pin.Pin(&pairs[0])
		args.GpuPairs = unsafe.Pointer(unsafe.SliceData(pairs))
		args.GpuPairsCount = uint32(len(pairs))
	}
	return p.call("Restore", "cuCheckpointProcessRestore", func() error {
		return driver.CheckpointProcessRestore(int32(p.pid), &args)
	})
}

// Unlock unlocks a Locked process (cuCheckpointProcessUnlock): its CUDA
// calls go on. The process is then Running.
func (p *Process) Unlock() error {
	var args driver.CheckpointUnlockArgs
	return p.call("Unlock", "cuCheckpointProcessUnlock", func() error {
		return driver.CheckpointProcessUnlock(int32(p.pid), &args)
	})
}

// parseUUID reads a GPU UUID: 32 hex digits, dashes anywhere, an optional
// "GPU-" prefix.
func parseUUID(s string) (driver.Uuid, error) {
	var u driver.Uuid
	h := strings.ReplaceAll(strings.TrimPrefix(s, "GPU-"), "-", "")
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != len(u.Bytes) {
		return u, fmt.Errorf("%q is not a GPU UUID (32 hex digits, dashes allowed, as core.Device.UUID gives it)", s)
	}
	copy(u.Bytes[:], b)
	return u, nil
}

// initDriver runs cuInit once: the checkpoint calls need an initialized
// driver (they fail with CUDA_ERROR_NOT_INITIALIZED otherwise), and
// Restore needs it unless persistence mode is on. It creates no context.
func initDriver() error {
	initState.once.Do(func() { initState.err = driver.Init(0) })
	return initState.err
}

var initState struct {
	once sync.Once
	err  error
}

// required states: what each call needs the process to be in, for the
// error of a call made in another (CUDA_ERROR_ILLEGAL_STATE).
var required = map[string]State{"Lock": Running, "Checkpoint": Locked, "Restore": Checkpointed, "Unlock": Locked}

// call makes the checkpoint call f (C name fn) of operation op: it checks
// that the driver has the call, initializes the driver, calls f and turns
// its error into one that says what went wrong.
func (p *Process) call(op, fn string, f func() error) error {
	if p == nil || p.pid <= 0 {
		return fmt.Errorf("checkpoint: %s: %v is not a process: make one with NewProcess", op, p)
	}
	if _, err := driver.Proc(fn); err != nil {
		// Before cuInit: a driver without the call is the answer even
		// where it has no device either.
		return fmt.Errorf("checkpoint: %s %v: %w by this driver: %w", op, p, ErrNotSupported, err)
	}
	if err := initDriver(); err != nil {
		return fmt.Errorf("checkpoint: %s %v: initializing the CUDA driver: %w", op, p, err)
	}
	err := f()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, driver.ErrorNotSupported):
		return fmt.Errorf("checkpoint: %s %v: %w on this system (not Linux, or a GPU, driver or virtual machine without checkpoint support, or a process using what the driver cannot checkpoint): %w", op, p, ErrNotSupported, err)
	case errors.Is(err, driver.ErrorNotPermitted):
		return fmt.Errorf("checkpoint: %s %v: %w: the driver does not let this process (user %d) act on it (acting on another process takes privileges over it: run as root, or as its user): %w", op, p, ErrNotPermitted, os.Geteuid(), err)
	case errors.Is(err, driver.ErrorNotReady) && op == "Lock":
		return fmt.Errorf("checkpoint: %s %v: %w: the process could not be locked in time, and is left running: %w", op, p, ErrTimeout, err)
	case errors.Is(err, driver.ErrorIllegalState):
		if want, ok := required[op]; ok {
			if s, serr := p.stateNow(); serr == nil {
				return fmt.Errorf("checkpoint: %s %v: the process is %v, and %s needs it %v: %w", op, p, s, op, want, err)
			}
			return fmt.Errorf("checkpoint: %s %v: the process is not %v, as %s needs: %w", op, p, want, op, err)
		}
	}
	return fmt.Errorf("checkpoint: %s %v: %w", op, p, err)
}

// stateNow reads the state for an error message.
func (p *Process) stateNow() (State, error) {
	s, err := driver.CheckpointProcessGetState(int32(p.pid))
	return State(s), err
}

// processExists reports whether pid is a running process: signal 0 checks
// without sending anything (EPERM: it runs, as another user).
func processExists(pid int) error {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return errors.New("no such process")
	}
	return nil
}
