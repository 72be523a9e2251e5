package nccl

import (
	"context"
	"fmt"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/rendezvous"
)

// InitFromEnv makes this process's rank of a communicator of every
// process its launcher started (torchrun, Open MPI's mpirun, Slurm's srun,
// or the explicit CUDAGO_* variables: see package rendezvous), one GPU per
// process; a process no launcher started is rank 0 of 1.
//
// The device is the one of the process's local rank: device LocalRank,
// or device 0 when the process sees one device only (launchers that give
// each process its own GPU through CUDA_VISIBLE_DEVICES). Rank 0 makes
// the UniqueID and hands it to the other ranks over TCP
// (rendezvous.Env.Exchange, bounded by ctx's deadline, or
// CUDAGO_RENDEZVOUS_TIMEOUT); then every rank joins with InitRank, which
// returns once all have. ctx bounds the rendezvous, not NCCL's own
// initialization after it. cfg may be nil.
func InitFromEnv(ctx context.Context, cfg *Config) (*Comm, error) {
	env, err := rendezvous.FromEnv()
	if err != nil {
		return nil, err
	}
	dev, err := localDevice(env)
	if err != nil {
		return nil, err
	}
	var payload []byte
	if env.Rank == 0 {
		id, err := NewUniqueID()
		if err != nil {
			return nil, err
		}
		payload = id[:]
	}
	got, err := env.Exchange(ctx, payload)
	if err != nil {
		return nil, err
	}
	var id UniqueID
	if len(got) != len(id) {
		return nil, fmt.Errorf("nccl: InitFromEnv: rank 0 sent %d bytes, not an NCCL unique id (%d)", len(got), len(id))
	}
	copy(id[:], got)
	c, err := InitRank(dev, id, env.WorldSize, env.Rank, cfg)
	if err != nil {
		return nil, fmt.Errorf("nccl: InitFromEnv: rank %d of %d (%s) on %v: %w", env.Rank, env.WorldSize, launcherName(env), dev, err)
	}
	return c, nil
}

// localDevice picks the device of the process's local rank.
func localDevice(env rendezvous.Env) (*core.Device, error) {
	n, err := core.DeviceCount()
	if err != nil {
		return nil, err
	}
	i, err := deviceIndex(env, n)
	if err != nil {
		return nil, err
	}
	return core.GetDevice(i)
}

// deviceIndex is the device of env's local rank among n visible ones.
func deviceIndex(env rendezvous.Env, n int) (int, error) {
	switch {
	case n < 1:
		return 0, fmt.Errorf("nccl: InitFromEnv: no CUDA device is visible")
	case n == 1:
		return 0, nil
	case env.LocalRank < n:
		return env.LocalRank, nil
	}
	return 0, fmt.Errorf("nccl: InitFromEnv: local rank %d of %d (%s) but only %d devices are visible: start at most %d processes per node, or give each its own device (CUDA_VISIBLE_DEVICES)",
		env.LocalRank, env.LocalWorldSize, launcherName(env), n, n)
}

func launcherName(env rendezvous.Env) string {
	if env.Launcher == "" {
		return "no launcher"
	}
	return string(env.Launcher)
}
