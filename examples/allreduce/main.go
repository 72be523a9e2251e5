// Command allreduce sums a vector across processes, one GPU each, with
// NCCL: every rank fills its vector with values of its own, AllReduce
// adds them up in place on the GPUs, and each rank checks the result
// against the sum computed on the CPU.
//
// Start it with a launcher, one process per GPU:
//
//	torchrun --nproc-per-node 2 --no-python ./allreduce
//	mpirun -np 2 ./allreduce                      (Open MPI)
//	srun -n 2 --gpus-per-task 1 ./allreduce       (Slurm)
//	CUDAGO_RANK=1 CUDAGO_WORLD_SIZE=2 CUDAGO_LOCAL_RANK=1 CUDAGO_RENDEZVOUS_ADDR=127.0.0.1:29500 ./allreduce
//
// or without one: then it is a single rank. Package rendezvous reads the
// launcher's variables; rank 0 makes NCCL's unique id and hands it to the
// others over TCP.
//
// Without a GPU it computes the expected sum, says that it cannot run the
// AllReduce, and exits 0; it exits 1 on any other error or a wrong result.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/examples/internal/demo"
	"github.com/cudago/cudago/nccl"
	"github.com/cudago/cudago/rendezvous"
)

const n = 1 << 20

// input is rank r's vector: small integers, whose float32 sums are exact
// in any order.
func input(r int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32((i*7+r*13)%101 - 50)
	}
	return x
}

func main() { demo.Main("allreduce", run) }

func run() error {
	env, err := rendezvous.FromEnv()
	if err != nil {
		return err
	}
	launcher := string(env.Launcher)
	if launcher == "" {
		launcher = "no launcher"
	}
	fmt.Printf("rank %d of %d (%s, local rank %d of %d)\n", env.Rank, env.WorldSize, launcher, env.LocalRank, env.LocalWorldSize)
	want := make([]float32, n)
	for r := range env.WorldSize {
		for i, v := range input(r) {
			want[i] += v
		}
	}
	fmt.Printf("expected sum: [%g %g %g ...]\n", want[0], want[1], want[2])
	if count, err := core.DeviceCount(); err != nil || count == 0 {
		if err == nil {
			err = fmt.Errorf("no CUDA device")
		}
		fmt.Printf("no GPU, so the AllReduce was not run: %v\n", err)
		return nil
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	comm, err := nccl.InitFromEnv(ctx, nil)
	if err != nil {
		return err
	}
	defer comm.Close()
	dev := comm.Device()
	s, err := dev.NewStream(nil)
	if err != nil {
		return err
	}
	defer s.Close()
	buf, err := demo.Upload(s, input(comm.Rank()))
	if err != nil {
		return err
	}
	defer buf.Close()
	start := time.Now()
	if err := nccl.AllReduce[float32](comm, s, buf, buf, n, nccl.Sum); err != nil {
		return err
	}
	// Wait watches for NCCL's asynchronous errors (a rank that died)
	// while the stream runs.
	if err := comm.Wait(ctx, s); err != nil {
		return err
	}
	took := time.Since(start)
	got, err := demo.Download[float32](buf)
	if err != nil {
		return err
	}
	if err := demo.Equal(fmt.Sprintf("rank %d", comm.Rank()), got, want); err != nil {
		return err
	}
	v, _ := nccl.Version()
	fmt.Printf("rank %d of %d on %v: AllReduce of %d float32 in %v matches the CPU (NCCL %s)\n",
		comm.Rank(), comm.Count(), dev, n, took.Round(time.Microsecond), v)
	return nil
}
