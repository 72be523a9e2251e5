package checkpoint_test

import (
	"fmt"
	"log"
	"time"

	"github.com/cudago/cudago/checkpoint"
)

// Pause a CUDA process, give its GPU memory back while it waits, and let
// it go on: the cycle of cuda-checkpoint --toggle. (It needs a GPU, a CUDA
// 12.8 or newer driver and a CUDA process to act on, so it is not run as a
// test.)
func Example() {
	pid := 12345 // a CUDA process of yours
	p, err := checkpoint.NewProcess(pid)
	if err != nil {
		log.Fatal(err)
	}
	if err := p.Lock(&checkpoint.LockOptions{Timeout: 10 * time.Second}); err != nil {
		log.Fatal(err) // errors.Is(err, checkpoint.ErrNotSupported) on an older driver
	}
	if err := p.Checkpoint(); err != nil {
		log.Fatal(err)
	}
	s, _ := p.State()
	fmt.Println(s) // checkpointed: its GPU memory is in host memory, the GPU is free

	// ... later, on the same GPUs (or others: RestoreOptions.GPUs).
	if err := p.Restore(nil); err != nil {
		log.Fatal(err)
	}
	if err := p.Unlock(); err != nil {
		log.Fatal(err)
	}
}
