package rendezvous

import (
	"strconv"
	"strings"
	"testing"
)

// setLauncherEnv clears every variable FromEnv reads (empty counts as
// unset) and sets vars, for the rest of the test.
func setLauncherEnv(t *testing.T, vars map[string]string) {
	t.Helper()
	for _, v := range launcherVars {
		t.Setenv(v, "")
	}
	for k, v := range vars {
		t.Setenv(k, v)
	}
}

func port(n int) string { return strconv.Itoa(n) }

func TestFromEnv(t *testing.T) {
	torch := func(extra map[string]string) map[string]string {
		m := map[string]string{"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4",
			"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	ompi := func(extra map[string]string) map[string]string {
		m := map[string]string{"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4",
			"OMPI_COMM_WORLD_LOCAL_RANK": "2", "OMPI_COMM_WORLD_LOCAL_SIZE": "4"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	slurm := func(extra map[string]string) map[string]string {
		m := map[string]string{"SLURM_PROCID": "5", "SLURM_STEP_NUM_TASKS": "8", "SLURM_NTASKS": "8",
			"SLURM_LOCALID": "1", "SLURM_NODEID": "1", "SLURM_STEP_TASKS_PER_NODE": "4(x2)",
			"SLURM_STEP_NODELIST": "gpu[07-08]", "SLURM_JOB_ID": "1234", "SLURM_STEP_ID": "0"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	slurmPort := derivedPort("slurm:1234.0")
	cases := []struct {
		name string
		vars map[string]string
		want Env
		err  string // a substring of the error; "" for success
	}{
		{name: "none", vars: nil, want: Env{Rank: 0, WorldSize: 1, LocalRank: 0, LocalWorldSize: 1}},

		// cudago
		{name: "cudago", vars: map[string]string{"CUDAGO_RANK": "2", "CUDAGO_WORLD_SIZE": "4", "CUDAGO_LOCAL_RANK": "0",
			"CUDAGO_LOCAL_WORLD_SIZE": "2", "CUDAGO_RENDEZVOUS_ADDR": "10.0.0.1:7000"},
			want: Env{Launcher: Cudago, Rank: 2, WorldSize: 4, LocalRank: 0, LocalWorldSize: 2, Addr: "10.0.0.1:7000"}},
		{name: "cudago/no local", vars: map[string]string{"CUDAGO_RANK": "3", "CUDAGO_WORLD_SIZE": "4", "CUDAGO_RENDEZVOUS_ADDR": "h:1"},
			want: Env{Launcher: Cudago, Rank: 3, WorldSize: 4, LocalRank: 0, LocalWorldSize: 1, Addr: "h:1"}},
		{name: "cudago/one rank ignores addr", vars: map[string]string{"CUDAGO_RANK": "0", "CUDAGO_WORLD_SIZE": "1", "CUDAGO_RENDEZVOUS_ADDR": "bad"},
			want: Env{Launcher: Cudago, Rank: 0, WorldSize: 1, LocalRank: 0, LocalWorldSize: 1}},
		{name: "cudago/over torchrun", vars: torch(map[string]string{"CUDAGO_RANK": "0", "CUDAGO_WORLD_SIZE": "2", "CUDAGO_RENDEZVOUS_ADDR": "[::1]:9"}),
			want: Env{Launcher: Cudago, Rank: 0, WorldSize: 2, LocalRank: 0, LocalWorldSize: 1, Addr: "[::1]:9"}},
		{name: "cudago/no addr", vars: map[string]string{"CUDAGO_RANK": "0", "CUDAGO_WORLD_SIZE": "2"},
			err: "CUDAGO_WORLD_SIZE=2 but CUDAGO_RENDEZVOUS_ADDR (host:port of rank 0) is not set"},
		{name: "cudago/addr not host:port", vars: map[string]string{"CUDAGO_RANK": "0", "CUDAGO_WORLD_SIZE": "2", "CUDAGO_RENDEZVOUS_ADDR": "nohost"},
			err: `CUDAGO_RENDEZVOUS_ADDR="nohost" is not host:port`},
		{name: "cudago/addr no host", vars: map[string]string{"CUDAGO_RANK": "0", "CUDAGO_WORLD_SIZE": "2", "CUDAGO_RENDEZVOUS_ADDR": ":7000"},
			err: `CUDAGO_RENDEZVOUS_ADDR=":7000" has no host`},
		{name: "cudago/addr port 0", vars: map[string]string{"CUDAGO_RANK": "0", "CUDAGO_WORLD_SIZE": "2", "CUDAGO_RENDEZVOUS_ADDR": "h:0"},
			err: `CUDAGO_RENDEZVOUS_ADDR="h:0": port "0" is not from 1 to 65535`},
		{name: "cudago/no world size", vars: map[string]string{"CUDAGO_RANK": "0"},
			err: "CUDAGO_RANK is set but CUDAGO_WORLD_SIZE is not"},
		{name: "cudago/bad rank", vars: map[string]string{"CUDAGO_RANK": "one", "CUDAGO_WORLD_SIZE": "2"},
			err: `CUDAGO_RANK="one" is not a number`},

		// torchrun
		{name: "torchrun/agent store", vars: torch(map[string]string{"TORCHELASTIC_USE_AGENT_STORE": "True"}),
			want: Env{Launcher: Torchrun, Rank: 1, WorldSize: 4, LocalRank: 1, LocalWorldSize: 4, Addr: "127.0.0.1:29501"}},
		{name: "torchrun/no agent store", vars: torch(map[string]string{"TORCHELASTIC_USE_AGENT_STORE": "False"}),
			want: Env{Launcher: Torchrun, Rank: 1, WorldSize: 4, LocalRank: 1, LocalWorldSize: 4, Addr: "127.0.0.1:29500"}},
		{name: "torchrun/env convention", vars: map[string]string{"RANK": "3", "WORLD_SIZE": "8", "MASTER_ADDR": "trainer-0", "MASTER_PORT": "23456"},
			want: Env{Launcher: Torchrun, Rank: 3, WorldSize: 8, LocalRank: 0, LocalWorldSize: 1, Addr: "trainer-0:23456"}},
		{name: "torchrun/ipv6", vars: torch(map[string]string{"MASTER_ADDR": "::1", "TORCHELASTIC_USE_AGENT_STORE": "True"}),
			want: Env{Launcher: Torchrun, Rank: 1, WorldSize: 4, LocalRank: 1, LocalWorldSize: 4, Addr: "[::1]:29501"}},
		{name: "torchrun/ipv6 brackets", vars: torch(map[string]string{"MASTER_ADDR": "[fe80::1]"}),
			want: Env{Launcher: Torchrun, Rank: 1, WorldSize: 4, LocalRank: 1, LocalWorldSize: 4, Addr: "[fe80::1]:29500"}},
		{name: "torchrun/one rank needs no address", vars: map[string]string{"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1"},
			want: Env{Launcher: Torchrun, Rank: 0, WorldSize: 1, LocalRank: 0, LocalWorldSize: 1}},
		{name: "torchrun/address override", vars: torch(map[string]string{"CUDAGO_RENDEZVOUS_ADDR": "node0:6000"}),
			want: Env{Launcher: Torchrun, Rank: 1, WorldSize: 4, LocalRank: 1, LocalWorldSize: 4, Addr: "node0:6000"}},
		{name: "torchrun/over openmpi and slurm", vars: torch(ompi(slurm(nil))),
			want: Env{Launcher: Torchrun, Rank: 1, WorldSize: 4, LocalRank: 1, LocalWorldSize: 4, Addr: "127.0.0.1:29500"}},
		{name: "torchrun/rank not a number", vars: torch(map[string]string{"RANK": "x"}), err: `RANK="x" is not a number`},
		{name: "torchrun/negative rank", vars: torch(map[string]string{"RANK": "-1"}), err: `RANK="-1" is not a number`},
		{name: "torchrun/rank too big", vars: torch(map[string]string{"RANK": "4"}), err: "RANK=4 is not below WORLD_SIZE=4"},
		{name: "torchrun/world size 0", vars: torch(map[string]string{"WORLD_SIZE": "0"}), err: "WORLD_SIZE=0 must be at least 1"},
		{name: "torchrun/world size huge", vars: torch(map[string]string{"WORLD_SIZE": "99999999999999999999"}), err: `WORLD_SIZE="99999999999999999999" is not a number`},
		{name: "torchrun/no world size", vars: map[string]string{"RANK": "0"}, err: "RANK is set but WORLD_SIZE is not"},
		{name: "torchrun/no rank", vars: map[string]string{"WORLD_SIZE": "2"}, err: "WORLD_SIZE is set but RANK is not"},
		{name: "torchrun/local rank alone", vars: torch(map[string]string{"LOCAL_WORLD_SIZE": ""}), err: "LOCAL_RANK is set but LOCAL_WORLD_SIZE is not"},
		{name: "torchrun/local size alone", vars: torch(map[string]string{"LOCAL_RANK": ""}), err: "LOCAL_WORLD_SIZE is set but LOCAL_RANK is not"},
		{name: "torchrun/local rank too big", vars: torch(map[string]string{"LOCAL_RANK": "4"}), err: "LOCAL_RANK=4 is not below LOCAL_WORLD_SIZE=4"},
		{name: "torchrun/local size too big", vars: torch(map[string]string{"LOCAL_WORLD_SIZE": "5"}), err: "LOCAL_WORLD_SIZE=5 is not between 1 and the world size 4"},
		{name: "torchrun/no master addr", vars: torch(map[string]string{"MASTER_ADDR": ""}), err: "WORLD_SIZE=4 but MASTER_ADDR is not set"},
		{name: "torchrun/no master port", vars: torch(map[string]string{"MASTER_PORT": ""}), err: "MASTER_PORT is not set"},
		{name: "torchrun/bad master port", vars: torch(map[string]string{"MASTER_PORT": "http"}), err: `MASTER_PORT="http" is not a TCP port (1 to 65535)`},
		{name: "torchrun/port too big", vars: torch(map[string]string{"MASTER_PORT": "65536"}), err: `MASTER_PORT="65536" is not a TCP port`},
		{name: "torchrun/no port after agent's", vars: torch(map[string]string{"MASTER_PORT": "65535", "TORCHELASTIC_USE_AGENT_STORE": "True"}),
			err: "MASTER_PORT=65535 is torchrun's agent's port and leaves no next port"},
		{name: "torchrun/bad override", vars: torch(map[string]string{"CUDAGO_RENDEZVOUS_ADDR": "node0"}), err: `CUDAGO_RENDEZVOUS_ADDR="node0" is not host:port`},
		{name: "bad timeout", vars: torch(map[string]string{"CUDAGO_RENDEZVOUS_TIMEOUT": "soon"}),
			err: `CUDAGO_RENDEZVOUS_TIMEOUT="soon" is not a positive Go duration`},
		{name: "zero timeout", vars: map[string]string{"CUDAGO_RENDEZVOUS_TIMEOUT": "0s"},
			err: `CUDAGO_RENDEZVOUS_TIMEOUT="0s" is not a positive Go duration`},
		{name: "good timeout", vars: map[string]string{"CUDAGO_RENDEZVOUS_TIMEOUT": "90s"},
			want: Env{Rank: 0, WorldSize: 1, LocalRank: 0, LocalWorldSize: 1}},

		// Open MPI
		{name: "openmpi/one node pmix", vars: ompi(map[string]string{"PMIX_NAMESPACE": "prterun-host-4242@1"}),
			want: Env{Launcher: OpenMPI, Rank: 2, WorldSize: 4, LocalRank: 2, LocalWorldSize: 4,
				Addr: "127.0.0.1:" + port(derivedPort("openmpi:prterun-host-4242@1"))}},
		{name: "openmpi/one node jobid", vars: ompi(map[string]string{"OMPI_MCA_ess_base_jobid": "3141730305"}),
			want: Env{Launcher: OpenMPI, Rank: 2, WorldSize: 4, LocalRank: 2, LocalWorldSize: 4,
				Addr: "127.0.0.1:" + port(derivedPort("openmpi:3141730305"))}},
		{name: "openmpi/one node master port", vars: ompi(map[string]string{"MASTER_PORT": "4000"}),
			want: Env{Launcher: OpenMPI, Rank: 2, WorldSize: 4, LocalRank: 2, LocalWorldSize: 4, Addr: "127.0.0.1:4000"}},
		{name: "openmpi/nodes with master", vars: ompi(map[string]string{"OMPI_COMM_WORLD_LOCAL_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "0",
			"MASTER_ADDR": "node0", "MASTER_PORT": "4000"}),
			want: Env{Launcher: OpenMPI, Rank: 2, WorldSize: 4, LocalRank: 0, LocalWorldSize: 2, Addr: "node0:4000"}},
		{name: "openmpi/nodes with master addr and job id", vars: ompi(map[string]string{"OMPI_COMM_WORLD_LOCAL_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "0",
			"MASTER_ADDR": "node0", "PMIX_NAMESPACE": "ns"}),
			want: Env{Launcher: OpenMPI, Rank: 2, WorldSize: 4, LocalRank: 0, LocalWorldSize: 2, Addr: "node0:" + port(derivedPort("openmpi:ns"))}},
		{name: "openmpi/over slurm", vars: ompi(slurm(map[string]string{"MASTER_PORT": "4000"})),
			want: Env{Launcher: OpenMPI, Rank: 2, WorldSize: 4, LocalRank: 2, LocalWorldSize: 4, Addr: "127.0.0.1:4000"}},
		{name: "openmpi/nodes without master", vars: ompi(map[string]string{"OMPI_COMM_WORLD_LOCAL_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "0", "PMIX_NAMESPACE": "ns"}),
			err: "set MASTER_ADDR to rank 0's host (mpirun -x MASTER_ADDR=host)"},
		{name: "openmpi/no job id", vars: ompi(nil), err: "Open MPI set neither PMIX_NAMESPACE nor OMPI_MCA_ess_base_jobid"},
		{name: "openmpi/bad size", vars: ompi(map[string]string{"OMPI_COMM_WORLD_SIZE": "4x"}), err: `OMPI_COMM_WORLD_SIZE="4x" is not a number`},
		{name: "openmpi/no size", vars: ompi(map[string]string{"OMPI_COMM_WORLD_SIZE": ""}), err: "OMPI_COMM_WORLD_RANK is set but OMPI_COMM_WORLD_SIZE is not"},
		{name: "openmpi/bad local rank", vars: ompi(map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "9"}),
			err: "OMPI_COMM_WORLD_LOCAL_RANK=9 is not below OMPI_COMM_WORLD_LOCAL_SIZE=4"},

		// Slurm
		{name: "slurm/two nodes", vars: slurm(nil),
			want: Env{Launcher: Slurm, Rank: 5, WorldSize: 8, LocalRank: 1, LocalWorldSize: 4, Addr: "gpu07:" + port(slurmPort)}},
		{name: "slurm/uneven nodes", vars: slurm(map[string]string{"SLURM_PROCID": "6", "SLURM_STEP_NUM_TASKS": "7", "SLURM_LOCALID": "0",
			"SLURM_NODEID": "3", "SLURM_STEP_TASKS_PER_NODE": "2(x3),1", "SLURM_STEP_NODELIST": "node[01-03],gpu3"}),
			want: Env{Launcher: Slurm, Rank: 6, WorldSize: 7, LocalRank: 0, LocalWorldSize: 1, Addr: "node01:" + port(slurmPort)}},
		{name: "slurm/one node", vars: slurm(map[string]string{"SLURM_STEP_TASKS_PER_NODE": "8", "SLURM_NODEID": "0", "SLURM_STEP_NODELIST": "gpu07"}),
			want: Env{Launcher: Slurm, Rank: 5, WorldSize: 8, LocalRank: 1, LocalWorldSize: 8, Addr: "127.0.0.1:" + port(slurmPort)}},
		{name: "slurm/master", vars: slurm(map[string]string{"MASTER_ADDR": "10.1.2.3", "MASTER_PORT": "5000"}),
			want: Env{Launcher: Slurm, Rank: 5, WorldSize: 8, LocalRank: 1, LocalWorldSize: 4, Addr: "10.1.2.3:5000"}},
		{name: "slurm/old names", vars: slurm(map[string]string{"SLURM_STEP_NODELIST": "", "SLURM_JOB_NODELIST": "a[1-2]", "SLURM_JOB_ID": "",
			"SLURM_JOBID": "1234", "SLURM_STEP_ID": "", "SLURM_STEPID": "0", "SLURM_STEP_TASKS_PER_NODE": "", "SLURM_TASKS_PER_NODE": "4(x2)"}),
			want: Env{Launcher: Slurm, Rank: 5, WorldSize: 8, LocalRank: 1, LocalWorldSize: 4, Addr: "a1:" + port(slurmPort)}},
		{name: "slurm/ntasks per node", vars: slurm(map[string]string{"SLURM_STEP_TASKS_PER_NODE": "", "SLURM_NTASKS_PER_NODE": "4"}),
			want: Env{Launcher: Slurm, Rank: 5, WorldSize: 8, LocalRank: 1, LocalWorldSize: 4, Addr: "gpu07:" + port(slurmPort)}},
		{name: "slurm/no node id, even", vars: slurm(map[string]string{"SLURM_NODEID": ""}),
			want: Env{Launcher: Slurm, Rank: 5, WorldSize: 8, LocalRank: 1, LocalWorldSize: 4, Addr: "gpu07:" + port(slurmPort)}},
		{name: "slurm/batch shell is one process", vars: map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "8", "SLURM_JOB_ID": "1"},
			want: Env{Rank: 0, WorldSize: 1, LocalRank: 0, LocalWorldSize: 1}},
		{name: "slurm/no node id, uneven", vars: slurm(map[string]string{"SLURM_NODEID": "", "SLURM_STEP_TASKS_PER_NODE": "5,3"}),
			err: `SLURM_STEP_TASKS_PER_NODE="5,3" differs between nodes and SLURM_NODEID is not set`},
		{name: "slurm/tasks do not add up", vars: slurm(map[string]string{"SLURM_STEP_TASKS_PER_NODE": "4(x3)"}),
			err: `SLURM_STEP_TASKS_PER_NODE="4(x3)" adds up to 12 tasks, not SLURM_STEP_NUM_TASKS=8`},
		{name: "slurm/bad tasks per node", vars: slurm(map[string]string{"SLURM_STEP_TASKS_PER_NODE": "4(x2"}),
			err: `SLURM_STEP_TASKS_PER_NODE="4(x2": "4(x2": missing ')'`},
		{name: "slurm/node id too big", vars: slurm(map[string]string{"SLURM_NODEID": "2"}),
			err: `SLURM_NODEID=2 but SLURM_STEP_TASKS_PER_NODE="4(x2)" lists 2 nodes`},
		{name: "slurm/no tasks per node", vars: slurm(map[string]string{"SLURM_STEP_TASKS_PER_NODE": ""}),
			err: "srun set none of SLURM_STEP_TASKS_PER_NODE, SLURM_TASKS_PER_NODE, SLURM_NTASKS_PER_NODE"},
		{name: "slurm/no local id", vars: slurm(map[string]string{"SLURM_LOCALID": ""}), err: "SLURM_LOCALID is not set"},
		{name: "slurm/local id too big", vars: slurm(map[string]string{"SLURM_LOCALID": "4"}), err: "SLURM_LOCALID=4 is not below the 4 tasks of this node"},
		{name: "slurm/bad procid", vars: slurm(map[string]string{"SLURM_PROCID": "five"}), err: `SLURM_PROCID="five" is not a number`},
		{name: "slurm/procid too big", vars: slurm(map[string]string{"SLURM_PROCID": "8"}), err: "SLURM_PROCID=8 is not below SLURM_STEP_NUM_TASKS=8"},
		{name: "slurm/bad node list", vars: slurm(map[string]string{"SLURM_STEP_NODELIST": "gpu[07-"}),
			err: `SLURM_STEP_NODELIST="gpu[07-": "gpu[07-": '[' without ']'`},
		{name: "slurm/no node list", vars: slurm(map[string]string{"SLURM_STEP_NODELIST": ""}), err: "srun set no SLURM_STEP_NODELIST"},
		{name: "slurm/no job id", vars: slurm(map[string]string{"SLURM_JOB_ID": ""}), err: "srun set no SLURM_JOB_ID to derive a port from: set MASTER_PORT"},
		{name: "slurm/bad master port", vars: slurm(map[string]string{"MASTER_PORT": "0"}), err: `MASTER_PORT="0" is not a TCP port`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			setLauncherEnv(t, c.vars)
			got, err := FromEnv()
			if c.err != "" {
				if err == nil {
					t.Fatalf("FromEnv() = %+v, want an error with %q", got, c.err)
				}
				if !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "rendezvous: ") {
					t.Fatalf("FromEnv() error %q, want one with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("FromEnv(): %v", err)
			}
			if got != c.want {
				t.Fatalf("FromEnv() = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestDerivedPort(t *testing.T) {
	seen := map[int]string{}
	for _, key := range []string{"slurm:1234.0", "slurm:1234.1", "slurm:1235.0", "openmpi:ns", "openmpi:3141730305", ""} {
		p := derivedPort(key)
		if p < derivedPortBase || p > 65535 {
			t.Errorf("derivedPort(%q) = %d, outside %d-65535", key, p, derivedPortBase)
		}
		if p != derivedPort(key) {
			t.Errorf("derivedPort(%q) is not deterministic", key)
		}
		if other, dup := seen[p]; dup {
			t.Errorf("derivedPort(%q) = derivedPort(%q) = %d", key, other, p)
		}
		seen[p] = key
	}
}

func TestEnvString(t *testing.T) {
	for _, c := range []struct {
		e    Env
		want string
	}{
		{Env{WorldSize: 1, LocalWorldSize: 1}, "no launcher: rank 0 of 1 (local 0 of 1)"},
		{Env{Launcher: Torchrun, Rank: 1, WorldSize: 4, LocalRank: 1, LocalWorldSize: 2, Addr: "h:29501"},
			"torchrun: rank 1 of 4 (local 1 of 2), rank 0 at h:29501"},
	} {
		if got := c.e.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
}
