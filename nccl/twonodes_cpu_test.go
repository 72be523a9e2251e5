package nccl

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cudago/cudago/rendezvous"
)

// The variables scripts/gpu/twonodes.sh gives the processes of its two
// simulated nodes, checked without a GPU: each process must find its
// rank with rendezvous.FromEnv, pick a GPU of its own with deviceIndex
// (after CUDA_VISIBLE_DEVICES narrowed what it sees), and the ranks must
// agree on rank 0's address, which must work for a rendezvous here.

// twoNodesScript is the script, from the package directory.
const twoNodesScript = "../scripts/gpu/twonodes.sh"

// printEnv runs the script's --print-env mode for gpus GPUs and returns
// each process's (or node's) variables.
func printEnv(t *testing.T, gpus int, what string) []map[string]string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	cmd := exec.Command(bash, twoNodesScript, "--print-env", what)
	cmd.Env = append(os.Environ(), "GPUS="+strconv.Itoa(gpus))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s --print-env %s: %v", twoNodesScript, what, err)
	}
	var sets []map[string]string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# ") {
			sets = append(sets, map[string]string{})
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || len(sets) == 0 {
			t.Fatalf("--print-env %s: line %q", what, line)
		}
		sets[len(sets)-1][k] = v
	}
	return sets
}

// launcherVarNames are the variables FromEnv reads (rendezvous's list) and
// those the script sets, all cleared before a process's are set.
var launcherVarNames = []string{
	"CUDAGO_RANK", "CUDAGO_WORLD_SIZE", "CUDAGO_LOCAL_RANK", "CUDAGO_LOCAL_WORLD_SIZE", "CUDAGO_RENDEZVOUS_ADDR", "CUDAGO_RENDEZVOUS_TIMEOUT",
	"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_USE_AGENT_STORE",
	"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
	"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid",
	"SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", "SLURM_NODEID",
	"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE", "SLURM_NTASKS_PER_NODE",
	"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST",
	"SLURM_JOB_ID", "SLURM_JOBID", "SLURM_STEP_ID", "SLURM_STEPID",
}

// envOf returns what FromEnv makes of vars alone.
func envOf(t *testing.T, vars map[string]string) rendezvous.Env {
	t.Helper()
	for _, k := range launcherVarNames {
		t.Setenv(k, "")
	}
	for k, v := range vars {
		t.Setenv(k, v)
	}
	e, err := rendezvous.FromEnv()
	if err != nil {
		t.Fatalf("FromEnv with %v: %v", vars, err)
	}
	return e
}

// checkWorld checks what the processes of a simulated job found: ranks 0
// to n-1 once each, local ranks by node, one address for all, a GPU of
// their own (the physical index through CUDA_VISIBLE_DEVICES), one NCCL
// host id per node; then it runs a rendezvous of them all on this host.
func checkWorld(t *testing.T, launcher rendezvous.Launcher, perNode int, envs []rendezvous.Env, vars []map[string]string) {
	t.Helper()
	n := len(envs)
	gpus := map[string]int{}
	hostIDs := map[int]string{}
	for i, e := range envs {
		node := i / perNode
		if e.Launcher != launcher || e.Rank != i || e.WorldSize != n || e.LocalRank != i%perNode || e.LocalWorldSize != perNode {
			t.Errorf("process %d: %v; want %s rank %d of %d, local %d of %d", i, e, launcher, i, n, i%perNode, perNode)
		}
		if e.Addr != envs[0].Addr || e.Addr == "" {
			t.Errorf("process %d: rank 0 at %q, process 0 says %q", i, e.Addr, envs[0].Addr)
		}
		visible := strings.Split(vars[i]["CUDA_VISIBLE_DEVICES"], ",")
		d, err := deviceIndex(e, len(visible))
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
		phys := visible[d]
		if j, ok := gpus[phys]; ok {
			t.Errorf("processes %d and %d both use GPU %s", j, i, phys)
		}
		gpus[phys] = i
		if want := strconv.Itoa(node*perNode + i%perNode); phys != want {
			t.Errorf("process %d (node %d, local rank %d) uses GPU %s, want %s (its node's)", i, node, i%perNode, phys, want)
		}
		id := vars[i]["NCCL_HOSTID"]
		if old, ok := hostIDs[node]; ok && old != id || id == "" {
			t.Errorf("process %d: NCCL_HOSTID %q, its node's other processes %q", i, id, old)
		}
		hostIDs[node] = id
		if vars[i]["NCCL_NVLS_ENABLE"] != "0" {
			t.Errorf("process %d: NCCL_NVLS_ENABLE=%q", i, vars[i]["NCCL_NVLS_ENABLE"])
		}
	}
	if hostIDs[0] == hostIDs[1] {
		t.Errorf("both nodes have NCCL_HOSTID %q: NCCL would take them for one host", hostIDs[0])
	}
	// The address works: every rank's Exchange, here, gets rank 0's payload.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	got := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, e := range envs {
		wg.Go(func() {
			var p []byte
			if i == 0 {
				p = []byte("unique id of " + string(launcher))
			}
			got[i], errs[i] = e.Exchange(ctx, p)
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || string(got[i]) != "unique id of "+string(launcher) {
			t.Errorf("process %d: Exchange at %s: %q, %v", i, envs[0].Addr, got[i], errs[i])
		}
	}
}

// TestTwoNodesEnv: the Open MPI and Slurm variable sets of twonodes.sh,
// and torchrun's on its per-node variables, for 2 and 4 GPUs per node.
func TestTwoNodesEnv(t *testing.T) {
	for _, gpus := range []int{4, 8} {
		perNode := gpus / 2
		t.Run(fmt.Sprintf("%dGPUs", gpus), func(t *testing.T) {
			for _, c := range []struct {
				what     string
				launcher rendezvous.Launcher
			}{{"openmpi", rendezvous.OpenMPI}, {"slurm", rendezvous.Slurm}} {
				vars := printEnv(t, gpus, c.what)
				if len(vars) != gpus {
					t.Fatalf("--print-env %s: %d processes, want %d", c.what, len(vars), gpus)
				}
				envs := make([]rendezvous.Env, gpus)
				for i, v := range vars {
					envs[i] = envOf(t, v)
				}
				host, port, err := net.SplitHostPort(envs[0].Addr)
				if err != nil {
					t.Fatal(err)
				}
				if p, _ := strconv.Atoi(port); p < 61000 || p > 65535 {
					t.Errorf("%s: port %s is not derived from the job (61000-65535)", c.what, port)
				}
				switch c.what {
				case "openmpi":
					if host != "127.0.0.1" {
						t.Errorf("openmpi: rank 0 at %s, want MASTER_ADDR 127.0.0.1", host)
					}
				case "slurm":
					// The first node of the node list, as srun places task 0.
					if first, _, _ := strings.Cut(vars[0]["SLURM_STEP_NODELIST"], ","); host != first {
						t.Errorf("slurm: rank 0 at %s, want the node list's first %s", host, first)
					}
					for i, v := range vars {
						if strings.Contains(v["CUDA_VISIBLE_DEVICES"], ",") {
							t.Errorf("slurm task %d sees GPUs %s: --gpus-per-task 1 gives one", i, v["CUDA_VISIBLE_DEVICES"])
						}
					}
				}
				checkWorld(t, c.launcher, perNode, envs, vars)
			}

			// torchrun: each node's agent gives its workers the node's
			// variables and its own (static rendezvous, torch >= 2.4).
			nodes := printEnv(t, gpus, "nodes")
			if len(nodes) != 2 {
				t.Fatalf("--print-env nodes: %d nodes", len(nodes))
			}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			store := l.Addr().(*net.TCPAddr).Port // the agent's TCPStore, taken
			defer l.Close()
			var envs []rendezvous.Env
			var vars []map[string]string
			for node, nv := range nodes {
				for local := range perNode {
					v := map[string]string{
						"RANK": strconv.Itoa(node*perNode + local), "LOCAL_RANK": strconv.Itoa(local),
						"WORLD_SIZE": strconv.Itoa(gpus), "LOCAL_WORLD_SIZE": strconv.Itoa(perNode),
						"GROUP_RANK": strconv.Itoa(node), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": strconv.Itoa(store),
						"TORCHELASTIC_USE_AGENT_STORE": "True",
					}
					for k, x := range nv {
						v[k] = x
					}
					envs = append(envs, envOf(t, v))
					vars = append(vars, v)
				}
			}
			if want := net.JoinHostPort("127.0.0.1", strconv.Itoa(store+1)); envs[0].Addr != want {
				t.Errorf("torchrun: rank 0 at %s, want %s (MASTER_PORT+1)", envs[0].Addr, want)
			}
			if got, want := nodes[1]["CUDA_VISIBLE_DEVICES"], seq(perNode, gpus); got != want {
				t.Errorf("node 1 sees GPUs %s, want %s", got, want)
			}
			checkWorld(t, rendezvous.Torchrun, perNode, envs, vars)
		})
	}
}

// seq is "lo,lo+1,...,hi-1", a CUDA_VISIBLE_DEVICES list.
func seq(lo, hi int) string {
	var s []string
	for i := lo; i < hi; i++ {
		s = append(s, strconv.Itoa(i))
	}
	return strings.Join(s, ",")
}
