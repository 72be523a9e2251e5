package core

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// stressDuration is how long TestGPUConcurrencyStress runs:
// $CUDAGO_STRESS_SECONDS, default 10 s.
func stressDuration(t *testing.T) time.Duration {
	if s := os.Getenv("CUDAGO_STRESS_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("CUDAGO_STRESS_SECONDS=%q: want a positive number of seconds", s)
		}
		return time.Duration(n) * time.Second
	}
	return 10 * time.Second
}

const stressSource = `
extern "C" __global__ void addk(float *x, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] += VALUE;
}
`

// TestGPUConcurrencyStress runs 32 goroutines that compile, load,
// allocate, copy and launch on a shared stream and on private ones for
// stressDuration, checking every result. Run it under -race: no race may
// be reported, and a watchdog turns a deadlock into a failure with every
// goroutine's stack.
func TestGPUConcurrencyStress(t *testing.T) {
	dev := requireGPU(t)
	d := stressDuration(t)
	shared, err := dev.NewStream(&StreamOptions{NonBlocking: true})
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	watchdog := time.AfterFunc(d+3*time.Minute, func() {
		buf := make([]byte, 1<<22)
		n := runtime.Stack(buf, true)
		fmt.Fprintf(os.Stderr, "TestGPUConcurrencyStress: deadlock? still running after %v\n%s\n", d+3*time.Minute, buf[:n])
		os.Exit(3)
	})
	defer watchdog.Stop()

	const workers = 32
	var iters, compiles, loads, fails atomic.Int64
	deadline := time.Now().Add(d)
	inParallel(t, workers, func(w int) error {
		private, err := dev.NewStream(nil)
		if err != nil {
			return err
		}
		defer private.Close()
		value := float32(w%7 + 1)
		var code *ObjectCode
		var k *Kernel
		defer func() {
			if code != nil {
				code.Close()
			}
		}()
		for i := 0; time.Now().Before(deadline); i++ {
			switch {
			case i%40 == 0: // compile anew
				p, err := NewProgram(stressSource, "c++", &ProgramOptions{
					Name: fmt.Sprintf("stress%d.cu", w), Arch: "sm_" + dev.Arch(),
					Defines: map[string]string{"VALUE": fmt.Sprintf("%d.0f", w%7+1), "ITER": strconv.Itoa(i % 3)}})
				if err != nil {
					return err
				}
				c, err := p.Compile("cubin")
				p.Close()
				if err != nil {
					return err
				}
				if code != nil {
					code.Close()
				}
				code = c
				compiles.Add(1)
				if k, err = code.Kernel("addk"); err != nil {
					return err
				}
			case i%10 == 0: // load the same CUBIN again
				c, err := FromCubin(code.Code())
				if err != nil {
					return err
				}
				code.Close()
				code = c
				loads.Add(1)
				if k, err = code.Kernel("addk"); err != nil {
					return err
				}
			}
			s := private
			if i%2 == 1 {
				s = shared
			}
			n := 1 + (i*97+w*31)%4096
			host := make([]float32, n)
			for j := range host {
				host[j] = float32(j % 1000)
			}
			b, err := dev.Allocate(n*4, s)
			if err != nil {
				return err
			}
			if err := CopyToDevice(b, host); err != nil {
				b.Close()
				return err
			}
			if err := Launch(s, LaunchConfig{Grid: Dim(uint32((n + 255) / 256)), Block: Dim(256)}, k, b, int32(n)); err != nil {
				b.Close()
				return err
			}
			out := make([]float32, n)
			if i%3 == 0 {
				err = CopyFromDeviceAsync(s, out, b)
				if err == nil {
					err = s.Sync()
				}
			} else {
				err = CopyFromDevice(out, b)
			}
			b.Close()
			if err != nil {
				return err
			}
			for j, v := range out {
				if want := float32(j%1000) + value; v != want {
					fails.Add(1)
					return fmt.Errorf("worker %d iteration %d: out[%d] = %v, want %v (n %d, stream %v)", w, i, j, v, want, n, s)
				}
			}
			if i%25 == 0 {
				e, err := s.Record()
				if err != nil {
					return err
				}
				if err := e.Sync(); err != nil {
					return err
				}
				e.Close()
			}
			iters.Add(1)
		}
		return nil
	})
	t.Logf("%d goroutines, %v (race detector %v): %d iterations, %d compiles, %d reloads, %d wrong results",
		workers, d, raceEnabled, iters.Load(), compiles.Load(), loads.Load(), fails.Load())
	if iters.Load() < workers {
		t.Errorf("only %d iterations in %v", iters.Load(), d)
	}
}
