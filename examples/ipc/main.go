// Command ipc shares GPU memory between two processes with package core.
//
// The producer (this program as started) allocates 1M floats from an
// IPCMemoryResource, a pool the driver can share, fills them, and starts
// itself again as the consumer. Over a Unix-domain socket (core.ListenIPC,
// core.DialIPC) it sends the pool's file descriptor and the buffer's
// descriptor; the consumer imports both, doubles every element in place
// with a kernel, closes its import and says so; the producer then checks
// every element. It exits 1 on a mismatch or an error. Without a GPU it
// says what it could not run and exits 0.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/examples/internal/demo"
)

// The consumer finds the socket's path here.
const socketEnv = "CUDAGO_IPC_EXAMPLE_SOCKET"

const n = 1 << 20

const scaleSrc = `
extern "C" __global__ void scale(float* x, float a, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] *= a;
}
`

func main() {
	role, run := "producer", produce
	if path := os.Getenv(socketEnv); path != "" {
		role, run = "consumer", func() error { return consume(path) }
	}
	demo.Main("ipc "+role, run)
}

func produce() error {
	dev := demo.Device("the IPC example (a pool buffer shared with a second process) was not run")
	if dev == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	mr, err := core.NewIPCMemoryResource(dev, nil)
	if err != nil {
		return err
	}
	defer mr.Close()
	buf, err := core.AllocFrom[float32](mr, n, nil)
	if err != nil {
		return err
	}
	defer buf.Close() // after the consumer has closed its import
	x, want := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], want[i] = float32(i), 2*float32(i)
	}
	if err := core.CopyToDevice(buf, x); err != nil {
		return err
	}

	dir, err := os.MkdirTemp("", "cudago-ipc")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "socket")
	l, err := core.ListenIPC(path)
	if err != nil {
		return err
	}
	defer l.Close()

	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), socketEnv+"="+path)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	err = func() error {
		ch, err := l.Accept(ctx)
		if err != nil {
			return err
		}
		defer ch.Close()
		if err := ch.SendMemoryResource(ctx, mr); err != nil {
			return err
		}
		if err := ch.SendBuffer(ctx, buf); err != nil {
			return err
		}
		ans, err := ch.Receive(ctx) // the consumer's import is closed
		if err != nil {
			return err
		}
		if string(ans) != "done" {
			return fmt.Errorf("the consumer answered %q", ans)
		}
		return nil
	}()
	if werr := cmd.Wait(); werr != nil {
		return errors.Join(err, fmt.Errorf("the consumer: %w", werr))
	}
	if err != nil {
		return err
	}

	if err := core.CopyFromDevice(x, buf); err != nil {
		return err
	}
	if err := demo.Equal("x", x, want); err != nil {
		return err
	}
	fmt.Printf("ipc: process %d doubled the %d floats of process %d's pool buffer in place; all results correct\n", cmd.Process.Pid, n, os.Getpid())
	return nil
}

func consume(path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ch, err := core.DialIPC(ctx, path)
	if err != nil {
		return err
	}
	defer ch.Close()
	mr, err := ch.ReceiveMemoryResource(ctx) // the producer's pool, on the same GPU
	if err != nil {
		return err
	}
	defer mr.Close()
	buf, err := ch.ReceiveBuffer(ctx, mr, nil)
	if err != nil {
		return err
	}
	defer buf.Close()

	dev := mr.Device()
	code, err := demo.Compile(scaleSrc, "scale", dev.Arch())
	if err != nil {
		return err
	}
	defer code.Close()
	k, err := code.Kernel("scale")
	if err != nil {
		return err
	}
	s := buf.Stream() // the legacy default stream of the device
	if err := core.Launch(s, core.LaunchConfig{Grid: core.Dim(n / 256), Block: core.Dim(256)}, k, buf, float32(2), int32(n)); err != nil {
		return err
	}
	// Close waits for the free of the import, after the kernel: the
	// producer may then read and free the buffer.
	if err := buf.Close(); err != nil {
		return err
	}
	return ch.Send(ctx, []byte("done"))
}
