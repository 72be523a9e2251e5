package rendezvous_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/cudago/cudago/rendezvous"
)

// Each process of a job (torchrun --nproc-per-node 4 ./prog, mpirun -np 4
// ./prog, srun -n 4 ./prog, or ./prog alone) finds its rank, and rank 0's
// id reaches every rank: what an NCCL communicator needs.
func Example() {
	env, err := rendezvous.FromEnv()
	if err != nil {
		log.Fatal(err)
	}
	var id []byte
	if env.Rank == 0 {
		id = make([]byte, 128) // ncclGetUniqueId's, in a real program
		rand.Read(id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id, err = env.Exchange(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%v has rank 0's %d-byte id\n", env, len(id))
}

// A launcher of your own sets CUDAGO_RANK, CUDAGO_WORLD_SIZE and
// CUDAGO_RENDEZVOUS_ADDR, or builds the Envs itself; here three ranks are
// goroutines of one process.
func ExampleEnv_Exchange() {
	const world = 3
	ids := make([][]byte, world)
	var wg sync.WaitGroup
	for rank := range world {
		wg.Go(func() {
			env := rendezvous.Env{Launcher: rendezvous.Cudago, Rank: rank, WorldSize: world,
				LocalRank: rank, LocalWorldSize: world, Addr: "127.0.0.1:29499"}
			var payload []byte
			if rank == 0 {
				payload = []byte("rank 0's unique id")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			id, err := env.Exchange(ctx, payload)
			if err != nil {
				log.Fatal(err)
			}
			ids[rank] = id
		})
	}
	wg.Wait()
	for rank, id := range ids {
		fmt.Printf("rank %d: %s\n", rank, id)
	}
	// Output:
	// rank 0: rank 0's unique id
	// rank 1: rank 0's unique id
	// rank 2: rank 0's unique id
}
