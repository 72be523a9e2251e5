// Package rendezvous tells a process of a multi-process job its rank and
// lets rank 0 hand a small payload (an NCCL unique id) to every other rank
// over TCP. It is pure Go: no cgo, no GPU.
//
//	env, err := rendezvous.FromEnv()      // rank, world size, rank 0's address
//	id, err := env.Exchange(ctx, myID)    // rank 0's myID, on every rank
//
// # Launchers
//
// FromEnv looks for the launchers' variables in this order and uses the
// first it finds; an empty variable counts as unset.
//
//  1. cudago, for launchers of your own: CUDAGO_RANK (which selects it),
//     CUDAGO_WORLD_SIZE, CUDAGO_LOCAL_RANK, CUDAGO_LOCAL_WORLD_SIZE and
//     CUDAGO_RENDEZVOUS_ADDR (host:port where rank 0 listens).
//  2. torchrun (also torch.distributed.launch and the env:// convention of
//     Kubeflow's PyTorchJob), selected by RANK or WORLD_SIZE: Rank from
//     RANK, WorldSize from WORLD_SIZE, LocalRank from LOCAL_RANK,
//     LocalWorldSize from LOCAL_WORLD_SIZE, and Addr from MASTER_ADDR and
//     MASTER_PORT (see Ports).
//  3. Open MPI, selected by OMPI_COMM_WORLD_RANK: Rank, WorldSize,
//     LocalRank and LocalWorldSize from OMPI_COMM_WORLD_RANK,
//     OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK and
//     OMPI_COMM_WORLD_LOCAL_SIZE. Open MPI names no address for rank 0:
//     Addr is MASTER_ADDR (pass it with mpirun -x MASTER_ADDR=host) or, when
//     every rank runs on one node (LOCAL_SIZE equals SIZE), 127.0.0.1;
//     ranks on several nodes without MASTER_ADDR are an error.
//  4. Slurm, selected by SLURM_PROCID together with SLURM_STEP_NUM_TASKS,
//     which srun sets in every task (the shell of an sbatch script is one
//     process, whatever SLURM_NTASKS says, and has no step variables): Rank from
//     SLURM_PROCID, WorldSize from SLURM_STEP_NUM_TASKS (srun's -n),
//     LocalRank from SLURM_LOCALID, LocalWorldSize from the entry for
//     SLURM_NODEID in SLURM_STEP_TASKS_PER_NODE (or SLURM_TASKS_PER_NODE,
//     "2(x3),1" forms; else SLURM_NTASKS_PER_NODE). Rank 0's host is
//     MASTER_ADDR, else 127.0.0.1 when the step runs on one node, else the
//     first host of SLURM_STEP_NODELIST (or SLURM_JOB_NODELIST), where srun
//     puts task 0 for its block, cyclic and plane distributions.
//  5. None of these: a single process, Rank 0 of WorldSize 1, Launcher "";
//     Exchange returns the payload at once.
//
// Local ranks given by neither variable (both unset) are 0 of 1: one
// process on its node. CUDAGO_RENDEZVOUS_ADDR, when set, replaces the
// address every launcher gives. With WorldSize 1 Addr is empty and no
// address variable is read. Errors name the variable and its value:
//
//	rendezvous: RANK="x" is not a number from 0 to 1073741824
//	rendezvous: RANK=4 is not below WORLD_SIZE=4
//
// # Ports
//
// torchrun: torchrun's agent on node 0 serves its own TCPStore on
// MASTER_PORT for the whole job, and with the static rendezvous
// (--master-addr/--master-port, the default) and the c10d one of torch 2.4
// and later (--rdzv-backend=c10d, --standalone) it hands that store to the
// workers and says so with TORCHELASTIC_USE_AGENT_STORE=True. The port is
// then taken, and rank 0 listens on MASTER_PORT+1 instead: with
// torchrun --nproc-per-node N ./prog (MASTER_PORT 29500 by default) that
// is 29501 on 127.0.0.1; with --nnodes M --master-addr node0 it is
// node0:29501, which must be free and reachable from the other nodes.
// With TORCHELASTIC_USE_AGENT_STORE=False (etcd rendezvous, older torch,
// TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1) or unset (the env:// convention),
// the launcher left MASTER_PORT free for the workers' rank 0, and rank 0
// listens on MASTER_PORT itself.
//
// Open MPI and Slurm: MASTER_PORT when set; else a port derived from the
// job's identity, which every rank shares and which differs between jobs:
// PMIX_NAMESPACE (Open MPI 5) or OMPI_MCA_ess_base_jobid (Open MPI 4), and
// SLURM_JOB_ID with SLURM_STEP_ID (so that steps of one job running at
// once differ). Derived ports lie in 61000-65535, above Linux's default
// ephemeral range (32768-60999), where outgoing connections and NCCL's own
// sockets take theirs. Two jobs whose rank 0 shares a node can still draw
// the same port (about one chance in 4500 per pair): rank 0 of the later
// one then fails to listen, with an error saying so; set MASTER_PORT.
//
// Rank 0 listens on every interface of its port, except for a loopback
// address (127.0.0.1, ::1, localhost), where it listens on loopback only.
// A host name can resolve on rank 0's own machine to an address the other
// nodes do not use (Debian maps its host name to 127.0.1.1), and torch's
// TCPStore listens on every interface for the same reason.
//
// # Exchange
//
// Each rank other than 0 dials Addr, retrying with backoff until the
// deadline (rank 0 may start later), and says hello: a magic number, the
// protocol version, its rank and the world size. Rank 0 checks each hello
// and, once all WorldSize-1 ranks are in, sends them the payload; each
// acknowledges it, and rank 0 returns only when every rank has. A rank that
// comes twice, a world size or protocol version that differs, or a rank
// out of range fails the rendezvous at once, and rank 0 tells every rank
// it holds why. A connection from something else (a port scanner, an HTTP
// client) is turned away without stopping the others; the timeout error
// mentions it. A rank that disconnects before the payload is sent is
// forgotten and may connect again. If rank 0 exits after accepting a rank,
// that rank fails at once with an error saying the connection closed.
//
// The deadline is the context's; without one it is
// CUDAGO_RENDEZVOUS_TIMEOUT (a Go duration, such as 90s) or, unset,
// DefaultTimeout (5 minutes). When it passes, rank 0's error names the
// ranks that never came and the other ranks' errors name the address that
// never answered.
//
// The protocol has no authentication: whoever reaches the port during the
// rendezvous and says hello with a free rank receives the payload, as with
// NCCL's own bootstrap and torch's TCPStore. Run jobs on a trusted network.
package rendezvous
