package rendezvous

import (
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Launcher names the program that started this process, as FromEnv found it.
type Launcher string

// The launchers FromEnv knows. The zero Launcher, "", is a process that no
// launcher started: a single rank.
const (
	Cudago   Launcher = "cudago"   // explicit CUDAGO_* variables
	Torchrun Launcher = "torchrun" // torchrun, torch.distributed.launch, or the env:// convention
	OpenMPI  Launcher = "openmpi"  // mpirun/mpiexec of Open MPI
	Slurm    Launcher = "slurm"    // a task of srun
)

// Env says where this process stands in a job: its ranks and where rank 0
// listens. FromEnv fills it from the launcher's variables; it may also be
// built by hand.
type Env struct {
	Launcher                  Launcher
	Rank, WorldSize           int // global
	LocalRank, LocalWorldSize int // on this node
	// Addr is host:port where rank 0 listens for the others; empty when
	// WorldSize is 1.
	Addr string
}

// String describes e in one line, for logs.
func (e Env) String() string {
	l := string(e.Launcher)
	if l == "" {
		l = "no launcher"
	}
	s := fmt.Sprintf("%s: rank %d of %d (local %d of %d)", l, e.Rank, e.WorldSize, e.LocalRank, e.LocalWorldSize)
	if e.Addr != "" {
		s += ", rank 0 at " + e.Addr
	}
	return s
}

// Variables FromEnv reads, by launcher.
const (
	envRank           = "CUDAGO_RANK"
	envWorldSize      = "CUDAGO_WORLD_SIZE"
	envLocalRank      = "CUDAGO_LOCAL_RANK"
	envLocalWorldSize = "CUDAGO_LOCAL_WORLD_SIZE"
	envAddr           = "CUDAGO_RENDEZVOUS_ADDR"
	envTimeout        = "CUDAGO_RENDEZVOUS_TIMEOUT"

	masterAddr = "MASTER_ADDR"
	masterPort = "MASTER_PORT"
)

// launcherVars lists every variable FromEnv may read; tests clear them.
var launcherVars = []string{
	envRank, envWorldSize, envLocalRank, envLocalWorldSize, envAddr, envTimeout,
	"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", masterAddr, masterPort, "TORCHELASTIC_USE_AGENT_STORE",
	"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
	"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid",
	"SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", "SLURM_NODEID",
	"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE", "SLURM_NTASKS_PER_NODE",
	"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST",
	"SLURM_JOB_ID", "SLURM_JOBID", "SLURM_STEP_ID", "SLURM_STEPID",
}

// getenv treats an empty variable as an unset one: launchers and shells
// export empty values, and neither means anything here.
func getenv(name string) (string, bool) {
	v := strings.TrimSpace(os.Getenv(name))
	return v, v != ""
}

// FromEnv finds the launcher that started this process and reads its
// variables; see the package documentation for the order and for where
// each field comes from. Every error names the variable and its value.
// A process that no launcher started is rank 0 of 1, with Launcher "".
func FromEnv() (Env, error) {
	// Checked here so that a bad value fails at start-up, not only when
	// Exchange reads it.
	if _, err := envTimeoutValue(); err != nil {
		return Env{}, err
	}
	var (
		e   Env
		err error
	)
	switch {
	case has(envRank):
		e, err = fromCudago()
	case has("RANK") || has("WORLD_SIZE"):
		e, err = fromTorchrun()
	case has("OMPI_COMM_WORLD_RANK"):
		e, err = fromOpenMPI()
	case has("SLURM_PROCID") && has("SLURM_STEP_NUM_TASKS"):
		e, err = fromSlurm()
	default:
		return Env{Rank: 0, WorldSize: 1, LocalRank: 0, LocalWorldSize: 1}, nil
	}
	if err != nil {
		return Env{}, err
	}
	if e.WorldSize == 1 {
		e.Addr = ""
		return e, nil
	}
	// CUDAGO_RENDEZVOUS_ADDR overrides what any launcher gives.
	if v, ok := getenv(envAddr); ok {
		if err := checkAddr(envAddr, v); err != nil {
			return Env{}, err
		}
		e.Addr = v
	}
	return e, nil
}

func has(name string) bool {
	_, ok := getenv(name)
	return ok
}

// fromCudago reads the explicit variables of a user's own launcher.
func fromCudago() (Env, error) {
	e, err := launcherRanks(Cudago, envRank, envWorldSize, envLocalRank, envLocalWorldSize)
	if err != nil {
		return Env{}, err
	}
	if e.WorldSize > 1 {
		v, ok := getenv(envAddr)
		if !ok {
			return Env{}, fmt.Errorf("rendezvous: %s=%d but %s (host:port of rank 0) is not set", envWorldSize, e.WorldSize, envAddr)
		}
		if err := checkAddr(envAddr, v); err != nil {
			return Env{}, err
		}
		e.Addr = v
	}
	return e, nil
}

// fromTorchrun reads torchrun's variables (also those of
// torch.distributed.launch and of the env:// convention that Kubeflow's
// PyTorchJob follows).
func fromTorchrun() (Env, error) {
	e, err := launcherRanks(Torchrun, "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")
	if err != nil {
		return Env{}, err
	}
	if e.WorldSize == 1 {
		return e, nil
	}
	host, ok := getenv(masterAddr)
	if !ok {
		return Env{}, fmt.Errorf("rendezvous: WORLD_SIZE=%d but %s is not set", e.WorldSize, masterAddr)
	}
	port, err := portVar(masterPort, true)
	if err != nil {
		return Env{}, err
	}
	// torchrun's agent on node 0 serves its own TCPStore on MASTER_PORT and
	// says so with TORCHELASTIC_USE_AGENT_STORE=True (the static and c10d
	// rendezvous of torch >= 2.4): the port is taken, so rank 0 listens on
	// the next one. With False (etcd, TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1,
	// older torch) or unset (launchers of the env:// convention) the port
	// was left free for the workers' rank 0, which binds it.
	if v, _ := getenv("TORCHELASTIC_USE_AGENT_STORE"); strings.EqualFold(v, "true") {
		if port == 65535 {
			return Env{}, fmt.Errorf("rendezvous: %s=%d is torchrun's agent's port and leaves no next port for rank 0; set %s", masterPort, port, envAddr)
		}
		port++
	}
	e.Addr = joinHostPort(host, port)
	return e, nil
}

// fromOpenMPI reads Open MPI's variables. Open MPI gives no rank-0 address:
// MASTER_ADDR/MASTER_PORT (mpirun -x) when set, else 127.0.0.1 when all
// ranks share one node, with a port derived from the job's id.
func fromOpenMPI() (Env, error) {
	e, err := launcherRanks(OpenMPI, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE")
	if err != nil {
		return Env{}, err
	}
	if e.WorldSize == 1 {
		return e, nil
	}
	host, ok := getenv(masterAddr)
	if !ok {
		if e.LocalWorldSize != e.WorldSize {
			return Env{}, fmt.Errorf("rendezvous: Open MPI runs the %d ranks on several nodes (OMPI_COMM_WORLD_LOCAL_SIZE=%d) and gives no address for rank 0: set %s to rank 0's host (mpirun -x %s=host)",
				e.WorldSize, e.LocalWorldSize, masterAddr, masterAddr)
		}
		host = "127.0.0.1"
	}
	port, err := portVar(masterPort, false)
	if err != nil {
		return Env{}, err
	}
	if port == 0 {
		// PMIX_NAMESPACE: Open MPI 5 (PRRTE); OMPI_MCA_ess_base_jobid: 4.x.
		// Both are the same for every rank of one mpirun and differ between
		// runs.
		id, name := firstOf("PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid")
		if name == "" {
			return Env{}, fmt.Errorf("rendezvous: Open MPI set neither PMIX_NAMESPACE nor OMPI_MCA_ess_base_jobid to derive a port from: set %s (mpirun -x %s=port)", masterPort, masterPort)
		}
		port = derivedPort("openmpi:" + id)
	}
	e.Addr = joinHostPort(host, port)
	return e, nil
}

// fromSlurm reads the variables srun gives each task.
func fromSlurm() (Env, error) {
	e := Env{Launcher: Slurm}
	var err error
	if e.Rank, e.WorldSize, err = ranks("SLURM_PROCID", "SLURM_STEP_NUM_TASKS"); err != nil {
		return Env{}, err
	}
	if e.LocalRank, err = intVar("SLURM_LOCALID"); err != nil {
		return Env{}, err
	}
	if e.LocalWorldSize, err = slurmLocalSize(e.WorldSize); err != nil {
		return Env{}, err
	}
	if e.LocalRank >= e.LocalWorldSize {
		return Env{}, fmt.Errorf("rendezvous: SLURM_LOCALID=%d is not below the %d tasks of this node", e.LocalRank, e.LocalWorldSize)
	}
	if e.WorldSize == 1 {
		return e, nil
	}
	host, ok := getenv(masterAddr)
	if !ok {
		if e.LocalWorldSize == e.WorldSize {
			// One node: loopback needs no name resolution (a Slurm NodeName
			// need not resolve when NodeAddr is set).
			host = "127.0.0.1"
		} else {
			list, name := firstOf("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST")
			if name == "" {
				return Env{}, fmt.Errorf("rendezvous: srun set no SLURM_STEP_NODELIST to find rank 0's node: set %s", masterAddr)
			}
			hosts, err := ExpandHostlist(list)
			if err != nil {
				return Env{}, fmt.Errorf("rendezvous: %s=%q: %w", name, list, err)
			}
			// Task 0 runs on the step's first node under srun's block,
			// cyclic and plane distributions; -m arbitrary needs MASTER_ADDR.
			host = hosts[0]
		}
	}
	port, err := portVar(masterPort, false)
	if err != nil {
		return Env{}, err
	}
	if port == 0 {
		job, name := firstOf("SLURM_JOB_ID", "SLURM_JOBID")
		if name == "" {
			return Env{}, fmt.Errorf("rendezvous: srun set no SLURM_JOB_ID to derive a port from: set %s", masterPort)
		}
		// The step id tells apart the steps of one job that run at once.
		step, _ := firstOf("SLURM_STEP_ID", "SLURM_STEPID")
		port = derivedPort("slurm:" + job + "." + step)
	}
	e.Addr = joinHostPort(host, port)
	return e, nil
}

// slurmLocalSize is the number of tasks on this node: the entry of
// SLURM_STEP_TASKS_PER_NODE (or SLURM_TASKS_PER_NODE) for SLURM_NODEID,
// else SLURM_NTASKS_PER_NODE.
func slurmLocalSize(world int) (int, error) {
	tpn, name := firstOf("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE")
	if name == "" {
		if _, ok := getenv("SLURM_NTASKS_PER_NODE"); !ok {
			return 0, fmt.Errorf("rendezvous: srun set none of SLURM_STEP_TASKS_PER_NODE, SLURM_TASKS_PER_NODE, SLURM_NTASKS_PER_NODE")
		}
		n, err := intVar("SLURM_NTASKS_PER_NODE")
		if err != nil {
			return 0, err
		}
		if n < 1 || n > world {
			return 0, fmt.Errorf("rendezvous: SLURM_NTASKS_PER_NODE=%d is not between 1 and SLURM_STEP_NUM_TASKS=%d", n, world)
		}
		return n, nil
	}
	counts, err := parseTasksPerNode(tpn)
	if err != nil {
		return 0, fmt.Errorf("rendezvous: %s=%q: %w", name, tpn, err)
	}
	sum := 0
	for _, c := range counts {
		sum += c
	}
	if sum != world {
		return 0, fmt.Errorf("rendezvous: %s=%q adds up to %d tasks, not SLURM_STEP_NUM_TASKS=%d", name, tpn, sum, world)
	}
	if _, ok := getenv("SLURM_NODEID"); !ok {
		for _, c := range counts[1:] {
			if c != counts[0] {
				return 0, fmt.Errorf("rendezvous: %s=%q differs between nodes and SLURM_NODEID is not set", name, tpn)
			}
		}
		return counts[0], nil
	}
	node, err := intVar("SLURM_NODEID")
	if err != nil {
		return 0, err
	}
	if node >= len(counts) {
		return 0, fmt.Errorf("rendezvous: SLURM_NODEID=%d but %s=%q lists %d nodes", node, name, tpn, len(counts))
	}
	return counts[node], nil
}

// launcherRanks reads the four rank variables of launcher l (rank, world
// size, local rank, local world size) into a new Env of l.
func launcherRanks(l Launcher, rankVar, sizeVar, localRankVar, localSizeVar string) (Env, error) {
	e := Env{Launcher: l}
	var err error
	if e.Rank, e.WorldSize, err = ranks(rankVar, sizeVar); err != nil {
		return Env{}, err
	}
	if e.LocalRank, e.LocalWorldSize, err = localRanks(localRankVar, localSizeVar, e.WorldSize); err != nil {
		return Env{}, err
	}
	return e, nil
}

// ranks reads a rank and a world size and checks 0 <= rank < size.
func ranks(rankVar, sizeVar string) (rank, size int, err error) {
	if _, ok := getenv(sizeVar); !ok {
		return 0, 0, fmt.Errorf("rendezvous: %s is set but %s is not", rankVar, sizeVar)
	}
	if _, ok := getenv(rankVar); !ok {
		return 0, 0, fmt.Errorf("rendezvous: %s is set but %s is not", sizeVar, rankVar)
	}
	if size, err = intVar(sizeVar); err != nil {
		return 0, 0, err
	}
	if size < 1 {
		return 0, 0, fmt.Errorf("rendezvous: %s=%d must be at least 1", sizeVar, size)
	}
	if rank, err = intVar(rankVar); err != nil {
		return 0, 0, err
	}
	if rank >= size {
		return 0, 0, fmt.Errorf("rendezvous: %s=%d is not below %s=%d", rankVar, rank, sizeVar, size)
	}
	return rank, size, nil
}

// localRanks reads a local rank and a local world size. Both unset is one
// process on its node (Kubeflow's PyTorchJob sets neither); one without
// the other is an error.
func localRanks(rankVar, sizeVar string, world int) (rank, size int, err error) {
	_, hasRank := getenv(rankVar)
	_, hasSize := getenv(sizeVar)
	switch {
	case !hasRank && !hasSize:
		return 0, 1, nil
	case !hasSize:
		return 0, 0, fmt.Errorf("rendezvous: %s is set but %s is not", rankVar, sizeVar)
	case !hasRank:
		return 0, 0, fmt.Errorf("rendezvous: %s is set but %s is not", sizeVar, rankVar)
	}
	if size, err = intVar(sizeVar); err != nil {
		return 0, 0, err
	}
	if size < 1 || size > world {
		return 0, 0, fmt.Errorf("rendezvous: %s=%d is not between 1 and the world size %d", sizeVar, size, world)
	}
	if rank, err = intVar(rankVar); err != nil {
		return 0, 0, err
	}
	if rank >= size {
		return 0, 0, fmt.Errorf("rendezvous: %s=%d is not below %s=%d", rankVar, rank, sizeVar, size)
	}
	return rank, size, nil
}

// intVar reads a set variable as a non-negative decimal number.
func intVar(name string) (int, error) {
	v, ok := getenv(name)
	if !ok {
		return 0, fmt.Errorf("rendezvous: %s is not set", name)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1<<30 {
		return 0, fmt.Errorf("rendezvous: %s=%q is not a number from 0 to %d", name, v, 1<<30)
	}
	return n, nil
}

// portVar reads a TCP port; an unset variable is 0 unless required.
func portVar(name string, required bool) (int, error) {
	v, ok := getenv(name)
	if !ok {
		if required {
			return 0, fmt.Errorf("rendezvous: %s is not set", name)
		}
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("rendezvous: %s=%q is not a TCP port (1 to 65535)", name, v)
	}
	return n, nil
}

// checkAddr accepts host:port with a host and a port from 1 to 65535.
func checkAddr(name, v string) error {
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return fmt.Errorf("rendezvous: %s=%q is not host:port: %v", name, v, err)
	}
	if host == "" {
		return fmt.Errorf("rendezvous: %s=%q has no host", name, v)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("rendezvous: %s=%q: port %q is not from 1 to 65535", name, v, port)
	}
	return nil
}

// joinHostPort joins MASTER_ADDR, which may be an IPv6 literal in brackets
// or not, with a port.
func joinHostPort(host string, port int) string {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// firstOf returns the value and name of the first set variable of names.
func firstOf(names ...string) (value, name string) {
	for _, n := range names {
		if v, ok := getenv(n); ok {
			return v, n
		}
	}
	return "", ""
}

// Derived ports lie in [derivedPortBase, 65535]: above Linux's default
// ephemeral range (32768-60999, where NCCL's own sockets and outgoing
// connections take their ports) and above most registered services.
const derivedPortBase = 61000

// derivedPort maps a job's identity, which all its ranks share, to a port.
func derivedPort(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return derivedPortBase + int(h.Sum32()%(65536-derivedPortBase))
}

// DefaultTimeout is how long Exchange waits when its context has no
// deadline and CUDAGO_RENDEZVOUS_TIMEOUT is not set. It covers ranks that
// start minutes apart (container pulls, slow file systems).
const DefaultTimeout = 5 * time.Minute

// envTimeoutValue reads CUDAGO_RENDEZVOUS_TIMEOUT (a Go duration such as
// "90s"); 0 when unset.
func envTimeoutValue() (time.Duration, error) {
	v, ok := getenv(envTimeout)
	if !ok {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("rendezvous: %s=%q is not a positive Go duration (such as 90s or 10m)", envTimeout, v)
	}
	return d, nil
}
