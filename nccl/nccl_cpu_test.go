package nccl

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
	ncclb "github.com/cudago/cudago/bindings/nccl"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/dl"
	"github.com/cudago/cudago/internal/testing/newglibc"
	"github.com/cudago/cudago/internal/testing/testenv"
	"github.com/cudago/cudago/lib"
	"github.com/cudago/cudago/pathfinder"
	"github.com/cudago/cudago/rendezvous"
)

// Debian's libnccl2 needs glibc 2.38: on CI's Debian 12 the tests run
// under the glibc setup-cuda.sh unpacks (see internal/testing/newglibc).
func TestMain(m *testing.M) {
	if os.Getenv("CUDAGO_NCCL_TEST_HELPER") == "nvls" {
		// A child of TestNVLSDefault: report what init left.
		v, set := os.LookupEnv("NCCL_NVLS_ENABLE")
		os.Stdout.WriteString("NCCL_NVLS_ENABLE=" + v + " set=" + map[bool]string{true: "yes", false: "no"}[set] + "\n")
		os.Exit(0)
	}
	os.Exit(newglibc.Main(m, func() error { _, err := pathfinder.Load(pathfinder.NCCL); return err }))
}

// TestNVLSDefault runs the test binary with NCCL_NVLS_ENABLE unset, and
// set to 1: the package's init sets 0 in the first case only.
func TestNVLSDefault(t *testing.T) {
	for _, c := range []struct{ env, want string }{
		{"", "NCCL_NVLS_ENABLE=0 set=yes"},
		{"1", "NCCL_NVLS_ENABLE=1 set=yes"},
		{"0", "NCCL_NVLS_ENABLE=0 set=yes"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "NCCL_NVLS_ENABLE=") {
				env = append(env, kv)
			}
		}
		env = append(env, "CUDAGO_NCCL_TEST_HELPER=nvls")
		if c.env != "" {
			env = append(env, "NCCL_NVLS_ENABLE="+c.env)
		}
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(out)) != c.want {
			t.Errorf("NCCL_NVLS_ENABLE %q before start: child says %q, %v; want %q", c.env, out, err, c.want)
		}
	}
	if v := os.Getenv("NCCL_NVLS_ENABLE"); v == "" {
		t.Error("NCCL_NVLS_ENABLE is not set in this process")
	}
}

func TestVersion(t *testing.T) {
	lib, err := pathfinder.Load(pathfinder.NCCL)
	if err != nil {
		t.Fatal(err)
	}
	want, err := lib.Version()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Version(); err != nil || got != want {
		t.Errorf("Version() = %q, %v; pathfinder says %s", got, err, want)
	}
}

// TestNewUniqueID: NCCL makes ids without a GPU.
func TestNewUniqueID(t *testing.T) {
	a, err := NewUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a == (UniqueID{}) || len(a) != 128 {
		t.Errorf("ids %x… and %x…", a[:16], b[:16])
	}
}

type named32 float32
type namedU8 uint8

func TestTypes(t *testing.T) {
	for _, c := range []struct {
		got, want DataType
	}{
		{TypeOf[int8](), Int8}, {TypeOf[uint8](), Uint8}, {TypeOf[int32](), Int32}, {TypeOf[uint32](), Uint32},
		{TypeOf[int64](), Int64}, {TypeOf[uint64](), Uint64}, {TypeOf[float32](), Float32}, {TypeOf[float64](), Float64},
		{TypeOf[named32](), Float32}, {TypeOf[namedU8](), Uint8},
	} {
		if c.got != c.want {
			t.Errorf("TypeOf = %v, want %v", c.got, c.want)
		}
	}
	sizes := map[DataType]int{Int8: 1, Uint8: 1, Int32: 4, Uint32: 4, Int64: 8, Uint64: 8, Float16: 2, Float32: 4,
		Float64: 8, BFloat16: 2, Float8E4M3: 1, Float8E5M2: 1}
	if len(DataTypes()) != int(ncclb.NumTypes) || len(sizes) != len(DataTypes()) {
		t.Errorf("%d data types, the header has %d", len(DataTypes()), ncclb.NumTypes)
	}
	for _, d := range DataTypes() {
		if d.Size() != sizes[d] || strings.HasPrefix(d.String(), "DataType(") {
			t.Errorf("%v: size %d, want %d", d, d.Size(), sizes[d])
		}
	}
	if DataType(12).valid() || DataType(-1).Size() != 0 || DataType(12).String() != "DataType(12)" {
		t.Error("DataType(12) or DataType(-1) is valid")
	}
	if len(Ops()) != int(ncclb.NumOps) || Op(5).valid() || Op(5).String() != "Op(5)" || Avg.String() != "Avg" {
		t.Errorf("ops %v", Ops())
	}
}

// fakeMR is a memory resource for Buffers that no GPU backs: the checks
// only read their size, device and accessibility.
type fakeMR struct {
	dev    *core.Device
	noCUDA bool // host memory the GPU cannot reach
}

func (f fakeMR) Allocate(int, *core.Stream) (*core.Buffer, error)     { return nil, errors.New("fake") }
func (f fakeMR) Deallocate(driver.Deviceptr, int, *core.Stream) error { return nil }
func (f fakeMR) Device() *core.Device                                 { return f.dev }
func (f fakeMR) DeviceAccessible() bool                               { return !f.noCUDA }
func (f fakeMR) HostAccessible() bool                                 { return f.noCUDA }

// fakeComm is rank `rank` of `count` on dev, with no NCCL communicator
// behind it: for the checks, which never reach NCCL.
func fakeComm(dev *core.Device, rank, count int) *Comm {
	return &Comm{state: &state{dev: dev, rank: rank, count: count}}
}

func fakeBuf(dev *core.Device, size int) *core.Buffer {
	return core.NewBuffer(0x100000, size, fakeMR{dev: dev}, nil)
}

// wantArg checks that err is a *lib.ArgError of fn about arg, saying what.
func wantArg(t *testing.T, err error, fn, arg string, what ...string) {
	t.Helper()
	var ae *lib.ArgError
	if !errors.As(err, &ae) {
		t.Errorf("%s: got %v (%T), want a *lib.ArgError about %s", fn, err, err, arg)
		return
	}
	if ae.Package != "nccl" || ae.Func != fn || ae.Arg != arg || !strings.HasPrefix(err.Error(), "nccl: "+fn+": ") {
		t.Errorf("got %q (Func %q, Arg %q), want one of %s about %s", err, ae.Func, ae.Arg, fn, arg)
	}
	for _, w := range what {
		if !strings.Contains(ae.Msg, w) {
			t.Errorf("%q lacks %q", err, w)
		}
	}
}

// TestChecks covers every check of the operations, without a GPU: each
// fails before NCCL (or a stream) is touched. The fake communicator has 4
// ranks; this is rank 1.
func TestChecks(t *testing.T) {
	dev, other := new(core.Device), new(core.Device)
	c := fakeComm(dev, 1, 4)
	b40 := fakeBuf(dev, 40) // 10 float32
	b160 := fakeBuf(dev, 160)
	b39 := fakeBuf(dev, 39)
	host := core.NewBuffer(0x100000, 160, fakeMR{dev: dev, noCUDA: true}, nil)
	elsewhere := fakeBuf(other, 160)

	// Sizes: AllReduce needs count elements in both.
	wantArg(t, c.AllReduce(nil, b39, b40, 10, Float32, Sum), "AllReduce", "send", "send holds 39 bytes", "needs 40 (count × 4 bytes)")
	wantArg(t, c.AllReduce(nil, b40, b39, 10, Float32, Sum), "AllReduce", "recv", "recv holds 39 bytes")
	// AllGather: recv holds count × ranks.
	wantArg(t, c.AllGather(nil, b40, b40, 10, Float32), "AllGather", "recv", "recv holds 40 bytes", "needs 160 (count × 4 ranks × 4 bytes)")
	wantArg(t, c.AllGather(nil, b39, b160, 10, Float32), "AllGather", "send", "needs 40")
	// ReduceScatter: send holds count × ranks.
	wantArg(t, c.ReduceScatter(nil, b40, b40, 10, Float32, Sum), "ReduceScatter", "send", "send holds 40 bytes", "needs 160 (count × 4 ranks × 4 bytes)")
	wantArg(t, c.ReduceScatter(nil, b160, b39, 10, Float32, Sum), "ReduceScatter", "recv", "needs 40")
	// Broadcast: root's send, everyone's recv; Reduce: everyone's send, root's recv.
	wantArg(t, c.Broadcast(nil, b39, b40, 10, Float32, 1), "Broadcast", "send", "needs 40")
	wantArg(t, c.Broadcast(nil, nil, b39, 10, Float32, 0), "Broadcast", "recv", "needs 40")
	wantArg(t, c.Reduce(nil, b40, b39, 10, Float32, Sum, 1), "Reduce", "recv", "needs 40")
	wantArg(t, c.Reduce(nil, b39, nil, 10, Float32, Sum, 0), "Reduce", "send", "needs 40")
	wantArg(t, c.Send(nil, b39, 10, Float32, 2), "Send", "send", "needs 40")
	wantArg(t, c.Recv(nil, b39, 10, Float32, 2), "Recv", "recv", "needs 40")
	// Other element sizes: 10 float64 are 80 bytes; 20 BFloat16 are 40.
	wantArg(t, c.AllReduce(nil, b40, b40, 10, Float64, Sum), "AllReduce", "send", "needs 80 (count × 8 bytes)")
	wantArg(t, AllReduce[float64](c, nil, b40, b40, 10, Sum), "AllReduce", "send", "needs 80")
	wantArg(t, AllGather[int64](c, nil, b160, b160, 10), "AllGather", "recv", "needs 320")
	wantArg(t, c.AllReduce(nil, b40, b40, 20, BFloat16, Sum), "AllReduce", "stream", "stream is nil")

	// nil Buffers, where needed; not where only the root has one.
	wantArg(t, c.AllReduce(nil, nil, b40, 10, Float32, Sum), "AllReduce", "send", "send is nil")
	wantArg(t, c.AllReduce(nil, b40, nil, 10, Float32, Sum), "AllReduce", "recv", "recv is nil")
	wantArg(t, c.Broadcast(nil, nil, b40, 10, Float32, 1), "Broadcast", "send", "send is nil")
	wantArg(t, c.Broadcast(nil, nil, b40, 10, Float32, 0), "Broadcast", "stream", "stream is nil")
	wantArg(t, c.Reduce(nil, b40, nil, 10, Float32, Sum, 1), "Reduce", "recv", "recv is nil")
	wantArg(t, c.Reduce(nil, b40, nil, 10, Float32, Sum, 3), "Reduce", "stream")
	wantArg(t, c.Send(nil, nil, 10, Float32, 0), "Send", "send", "send is nil")
	wantArg(t, c.Recv(nil, nil, 10, Float32, 0), "Recv", "recv", "recv is nil")

	// Roots and peers must be ranks.
	wantArg(t, c.Broadcast(nil, b40, b40, 10, Float32, 4), "Broadcast", "root", "root = 4 is not a rank of 4")
	wantArg(t, c.Reduce(nil, b40, b40, 10, Float32, Sum, -1), "Reduce", "root", "root = -1")
	wantArg(t, c.Send(nil, b40, 10, Float32, 7), "Send", "peer", "peer = 7 is not a rank of 4")
	wantArg(t, Recv[float32](c, nil, b40, 10, -2), "Recv", "peer", "peer = -2")

	// Counts, data types and ops.
	wantArg(t, c.AllReduce(nil, b40, b40, -1, Float32, Sum), "AllReduce", "count", "count = -1 is negative")
	wantArg(t, c.AllGather(nil, b40, b160, 1<<61, Float32), "AllGather", "count", "too large")
	wantArg(t, c.AllReduce(nil, b40, b40, 10, DataType(12), Sum), "AllReduce", "dt", "DataType(12)")
	wantArg(t, c.AllReduce(nil, b40, b40, 10, DataType(-1), Sum), "AllReduce", "dt")
	wantArg(t, c.AllReduce(nil, b40, b40, 10, Float32, Op(5)), "AllReduce", "op", "Op(5) is not Sum")
	wantArg(t, c.ReduceScatter(nil, b160, b40, 10, Float32, Op(-1)), "ReduceScatter", "op")
	wantArg(t, c.Reduce(nil, b40, b40, 10, Float32, Op(9), 0), "Reduce", "op")
	// Broadcast takes no Op: an Op value is not looked at.
	wantArg(t, c.Broadcast(nil, b40, b40, 10, Int8, 0), "Broadcast", "stream")

	// Memory of another device, or that the GPU cannot reach.
	wantArg(t, c.AllReduce(nil, elsewhere, b40, 10, Float32, Sum), "AllReduce", "send", "is memory of", "but NCCL rank 1 of 4")
	wantArg(t, c.AllGather(nil, b40, elsewhere, 10, Float32), "AllGather", "recv", "is memory of")
	wantArg(t, c.AllReduce(nil, b40, host, 10, Float32, Sum), "AllReduce", "recv", "which the GPU cannot access")

	// A valid operation gets as far as the stream.
	wantArg(t, c.AllReduce(nil, b40, b40, 10, Float32, Avg), "AllReduce", "stream", "stream is nil")
	wantArg(t, c.AllReduce(nil, b40, b40, 0, Float32, Sum), "AllReduce", "stream")

	// A nil comm; a closed one (ErrClosed before any other check).
	var nilComm *Comm
	wantArg(t, nilComm.AllReduce(nil, b40, b40, 10, Float32, Sum), "AllReduce", "comm", "comm is nil")
	closed := fakeComm(dev, 0, 2)
	closed.closed.Store(true)
	for _, err := range []error{
		closed.AllReduce(nil, nil, nil, -1, DataType(99), Sum),
		closed.Send(nil, b40, 10, Float32, 0),
		closed.AsyncError(),
		closed.Wait(t.Context(), nil),
		(&Comm{}).AllGather(nil, b40, b160, 10, Float32),
	} {
		if !errors.Is(err, core.ErrClosed) && !strings.Contains(err.Error(), "stream is nil") {
			t.Errorf("closed comm: %v, want ErrClosed", err)
		}
	}
	// The deprecated nccl.ErrClosed still matches, and matches core.ErrClosed.
	if err := closed.AllReduce(nil, b40, b40, 10, Float32, Sum); !errors.Is(err, core.ErrClosed) || !errors.Is(err, ErrClosed) || err.Error() != "nccl: AllReduce: use of a closed communicator" {
		t.Errorf("closed comm: %q", err)
	}
	if !errors.Is(ErrClosed, core.ErrClosed) || errors.Is(ErrClosed, core.ErrInvalidOption) || ErrClosed.Error() != "nccl: use of a closed communicator" {
		t.Errorf("nccl.ErrClosed = %q does not match core.ErrClosed alone", ErrClosed)
	}
	if _, err := closed.Split(0, 0, nil); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Split of a closed comm: %v", err)
	}
	if _, err := closed.Shrink([]int{1}, nil, false); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Shrink of a closed comm: %v", err)
	}
	if err := closed.Close(); err != nil {
		t.Errorf("Close after close: %v", err)
	}
	if err := (&Comm{}).Close(); err != nil || nilComm.Close() != nil || nilComm.Abort() != nil {
		t.Errorf("Close of a zero Comm: %v", err)
	}
	if nilComm.Rank() != -1 || nilComm.Count() != 0 || nilComm.Device() != nil || c.Rank() != 1 || c.Count() != 4 || c.Device() != dev {
		t.Error("Rank, Count or Device")
	}
}

// TestFP8Version: the fp8 types need NCCL 2.24.3; an older library is
// refused before NCCL sees them.
func TestFP8Version(t *testing.T) {
	v, err := libVersion()
	if err != nil {
		t.Fatal(err)
	}
	dev := new(core.Device)
	c := fakeComm(dev, 0, 1)
	b := fakeBuf(dev, 16)
	for _, dt := range []DataType{Float8E4M3, Float8E5M2} {
		err := c.AllReduce(nil, b, b, 16, dt, Max)
		if v < fp8Version {
			wantArg(t, err, "AllReduce", "dt", dt.String()+" needs NCCL 2.24.3 or newer; the loaded NCCL is "+ncclb.VersionString(v))
		} else {
			wantArg(t, err, "AllReduce", "stream")
		}
	}
}

func TestGroupChecks(t *testing.T) {
	dev := new(core.Device)
	c := fakeComm(dev, 0, 2)
	b := fakeBuf(dev, 64)
	var g Group
	if err := g.Run(); err != nil {
		t.Errorf("empty group: %v", err)
	}
	wantArg(t, g.AllGather(c, nil, b, b, 16, Float32), "Group.AllGather", "recv", "needs 128")
	wantArg(t, g.Send(c, nil, b, 4, Float32, 2), "Group.Send", "peer")
	wantArg(t, g.Recv(c, nil, b, 4, Float32, 1), "Group.Recv", "stream")
	wantArg(t, g.AllReduce(c, nil, b, b, 4, Float16, Prod), "Group.AllReduce", "stream")
	wantArg(t, g.Broadcast(c, nil, nil, b, 4, Float16, 0), "Group.Broadcast", "send", "send is nil")
	wantArg(t, g.Reduce(c, nil, b, nil, 4, Int32, Min, 0), "Group.Reduce", "recv", "recv is nil")
	wantArg(t, g.ReduceScatter(c, nil, b, b, 9, Int32, Min), "Group.ReduceScatter", "send", "needs 72")
	if g.Len() != 0 {
		t.Errorf("refused operations were added: %d", g.Len())
	}
	// An operation added and then made invalid (its comm closed) fails
	// Run, before NCCL: the group holds it as it was checked.
	g.tasks = append(g.tasks, task{kind: opAllReduce, c: c, send: b, recv: b, count: 4, dt: Float32})
	c.closed.Store(true)
	if err := g.Run(); !errors.Is(err, core.ErrClosed) || !strings.Contains(err.Error(), "Group.Run: operation 0 (AllReduce)") {
		t.Errorf("Run with a closed comm: %v", err)
	}
	g.Reset()
	if g.Len() != 0 {
		t.Error("Reset left operations")
	}
}

func TestInitChecks(t *testing.T) {
	d := new(core.Device)
	_, err := InitAll(nil)
	wantArg(t, err, "InitAll", "devs", "devs is empty")
	_, err = InitAll([]*core.Device{d, nil})
	wantArg(t, err, "InitAll", "devs", "devs[1] is nil")
	_, err = InitAll([]*core.Device{d, d})
	wantArg(t, err, "InitAll", "devs", "devs[0] and devs[1] are both", "one rank per device")

	var id UniqueID
	_, err = InitRank(nil, id, 1, 0, nil)
	wantArg(t, err, "InitRank", "dev", "dev is nil")
	_, err = InitRank(d, id, 0, 0, nil)
	wantArg(t, err, "InitRank", "nranks", "nranks = 0")
	_, err = InitRank(d, id, 2, 2, nil)
	wantArg(t, err, "InitRank", "rank", "rank = 2 is not in [0, 2)")
	_, err = InitRank(d, id, 2, -1, nil)
	wantArg(t, err, "InitRank", "rank")
	_, err = InitRank(d, id, 2, 0, &Config{MinCTAs: 8, MaxCTAs: 4})
	wantArg(t, err, "InitRank", "cfg", "cfg.MinCTAs = 8 is more than cfg.MaxCTAs = 4")
	_, err = InitRank(d, id, 2, 0, &Config{MaxCTAs: -1})
	wantArg(t, err, "InitRank", "cfg", "cfg.MaxCTAs = -1")
	_, err = InitRank(d, id, 2, 0, &Config{CommName: "a\x00b"})
	wantArg(t, err, "InitRank", "cfg", "NUL")

	c := fakeComm(d, 1, 4)
	_, err = c.Split(-2, 0, nil)
	wantArg(t, err, "Split", "color", "color = -2")
	_, err = c.Split(0, 1<<40, nil)
	wantArg(t, err, "Split", "key")
	_, err = c.Shrink(nil, nil, false)
	wantArg(t, err, "Shrink", "exclude", "exclude is empty")
	_, err = c.Shrink([]int{1}, nil, false)
	wantArg(t, err, "Shrink", "exclude", "this rank")
	_, err = c.Shrink([]int{4}, nil, false)
	wantArg(t, err, "Shrink", "exclude", "exclude[0] = 4 is not a rank of 4")
	_, err = c.Shrink([]int{2, 2}, nil, false)
	wantArg(t, err, "Shrink", "exclude", "rank 2 is excluded twice")
	_, err = SplitAll([]*Comm{c}, nil, nil, nil)
	wantArg(t, err, "SplitAll", "colors")
	if err := c.Wait(t.Context(), nil); err == nil {
		t.Error("Wait on a nil stream")
	}
}

// TestConfig checks what a Config becomes: NCCL's initializer with the
// fields set, and C strings.
func TestConfig(t *testing.T) {
	if c, err := (*Config)(nil).c("x"); c != nil || err != nil {
		t.Errorf("nil Config: %v, %v", c, err)
	}
	c, err := (&Config{CommName: "trainer", NetName: "Socket", MinCTAs: 2, MaxCTAs: 16, SplitShare: true}).c("x")
	if err != nil {
		t.Fatal(err)
	}
	want := ncclb.DefaultConfig()
	if c.Size != want.Size || c.Magic != want.Magic || c.Version != want.Version || c.Blocking != 1 ||
		c.MinCTAs != 2 || c.MaxCTAs != 16 || c.SplitShare != 1 || c.CgaClusterSize != ncclb.ConfigUndefInt {
		t.Errorf("config %+v", *c)
	}
	if s := dl.GoString(c.CommName); s != "trainer" {
		t.Errorf("CommName %q", s)
	}
	if s := dl.GoString(c.NetName); s != "Socket" {
		t.Errorf("NetName %q", s)
	}
}

func TestDeviceIndex(t *testing.T) {
	for _, c := range []struct {
		local, localSize, n, want int
		err                       string
	}{
		{0, 1, 1, 0, ""},
		{3, 4, 1, 0, ""}, // one visible device per process
		{3, 4, 4, 3, ""},
		{1, 2, 8, 1, ""},
		{4, 8, 4, 0, "local rank 4 of 8 (torchrun) but only 4 devices are visible"},
		{0, 1, 0, 0, "no CUDA device is visible"},
	} {
		env := rendezvous.Env{Launcher: rendezvous.Torchrun, LocalRank: c.local, LocalWorldSize: c.localSize}
		got, err := deviceIndex(env, c.n)
		if c.err == "" && (err != nil || got != c.want) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("local rank %d of %d, %d devices: %d, %v; want %d %q", c.local, c.localSize, c.n, got, err, c.want, c.err)
		}
	}
}

// clearLaunchers unsets (empties, which rendezvous takes as unset) the
// variables that select a launcher.
func clearLaunchers(t *testing.T) {
	for _, v := range []string{"CUDAGO_RANK", "RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS"} {
		t.Setenv(v, "")
	}
}

// TestInitFromEnvNoGPU: a bad launcher variable is reported first; with
// none, rank 0 of 1 needs a device, which this machine lacks.
func TestInitFromEnvNoGPU(t *testing.T) {
	clearLaunchers(t)
	t.Setenv("CUDAGO_RANK", "x")
	if _, err := InitFromEnv(t.Context(), nil); err == nil || !strings.Contains(err.Error(), "CUDAGO_RANK") {
		t.Errorf("InitFromEnv with CUDAGO_RANK=x: %v", err)
	}
	t.Setenv("CUDAGO_RANK", "")
	if testenv.GPUError() == nil {
		t.Skip("a GPU is present: TestGPUInitFromEnv runs instead")
	}
	c, err := InitFromEnv(t.Context(), nil)
	if err == nil || !errors.Is(err, driver.ErrorNoDevice) {
		t.Errorf("InitFromEnv without a GPU = %v, %v; want CUDA_ERROR_NO_DEVICE", c, err)
	}
}

// TestShrinkMissing: before NCCL 2.27.3 ncclCommShrink does not exist,
// and the generated call returns the bindings' *MissingFunctionError,
// without calling anything.
func TestShrinkMissing(t *testing.T) {
	v := olderThan(t, 2, 27, 3, "ncclCommShrink")
	ex := []int32{1}
	_, err := ncclCommShrink(0, 0, &ex[0], 1, nil, 0)
	wantMissing(t, err, "ncclCommShrink", "2.27.3", v)
}

// fakeBufAt is fakeBuf at address p, for checks that compare addresses.
func fakeBufAt(dev *core.Device, p driver.Deviceptr, size int) *core.Buffer {
	return core.NewBuffer(p, size, fakeMR{dev: dev}, nil)
}

// TestChecks228 covers the checks of AlltoAll, Gather and Scatter, which
// hold with any library: a bad argument is a *lib.ArgError even where the
// library lacks the function. Rank 1 of 4.
func TestChecks228(t *testing.T) {
	dev, other := new(core.Device), new(core.Device)
	c := fakeComm(dev, 1, 4)
	b40 := fakeBufAt(dev, 0x100000, 40) // 10 float32
	s160 := fakeBufAt(dev, 0x200000, 160)
	r160 := fakeBufAt(dev, 0x300000, 160)
	elsewhere := fakeBufAt(other, 0x400000, 160)
	big := fakeBufAt(dev, 0x500000, 400)
	lo, _ := big.View(0, 160)
	hi, _ := big.View(120, 160) // overlaps lo by 40 bytes
	apart, _ := big.View(160, 160)

	// AlltoAll: send and recv hold count × ranks, apart.
	wantArg(t, c.AlltoAll(nil, b40, r160, 10, Float32), "AlltoAll", "send", "send holds 40 bytes; AlltoAll of count = 10 Float32 needs 160 (count × 4 ranks × 4 bytes)")
	wantArg(t, c.AlltoAll(nil, s160, b40, 10, Float32), "AlltoAll", "recv", "recv holds 40 bytes", "needs 160")
	wantArg(t, c.AlltoAll(nil, nil, r160, 10, Float32), "AlltoAll", "send", "send is nil")
	wantArg(t, c.AlltoAll(nil, s160, nil, 10, Float32), "AlltoAll", "recv", "recv is nil")
	wantArg(t, AlltoAll[float64](c, nil, s160, r160, 10), "AlltoAll", "send", "needs 320 (count × 4 ranks × 8 bytes)")
	wantArg(t, c.AlltoAll(nil, lo, hi, 10, Float32), "AlltoAll", "recv", "send and recv overlap")
	wantArg(t, c.AlltoAll(nil, s160, s160, 10, Float32), "AlltoAll", "recv", "overlap")
	wantArg(t, c.AlltoAll(nil, s160, elsewhere, 10, Float32), "AlltoAll", "recv", "is memory of")
	wantArg(t, c.AlltoAll(nil, s160, r160, -1, Float32), "AlltoAll", "count", "negative")
	wantArg(t, c.AlltoAll(nil, s160, r160, 10, DataType(12)), "AlltoAll", "dt")

	// Gather: everyone's send, the root's recv of count × ranks.
	wantArg(t, c.Gather(nil, b40, b40, 10, Float32, 1), "Gather", "recv", "recv holds 40 bytes; Gather of count = 10 Float32 needs 160 (count × 4 ranks × 4 bytes)")
	wantArg(t, c.Gather(nil, nil, r160, 10, Float32, 1), "Gather", "send", "send is nil")
	wantArg(t, c.Gather(nil, b40, nil, 10, Float32, 1), "Gather", "recv", "recv is nil")
	wantArg(t, Gather[int64](c, nil, b40, r160, 10, 0), "Gather", "send", "needs 80 (count × 8 bytes)")
	wantArg(t, c.Gather(nil, b40, b40, 10, Float32, 4), "Gather", "root", "root = 4 is not a rank of 4")
	wantArg(t, c.Gather(nil, b40, b40, 10, Float32, -1), "Gather", "root", "root = -1")

	// Scatter: the root's send of count × ranks, everyone's recv.
	wantArg(t, c.Scatter(nil, b40, b40, 10, Float32, 1), "Scatter", "send", "send holds 40 bytes; Scatter of count = 10 Float32 needs 160 (count × 4 ranks × 4 bytes)")
	wantArg(t, c.Scatter(nil, s160, nil, 10, Float32, 3), "Scatter", "recv", "recv is nil")
	wantArg(t, c.Scatter(nil, nil, b40, 10, Float32, 1), "Scatter", "send", "send is nil")
	wantArg(t, Scatter[float64](c, nil, nil, b40, 10, 0), "Scatter", "recv", "needs 80")
	wantArg(t, c.Scatter(nil, s160, b40, 10, Float32, 7), "Scatter", "root", "root = 7")

	// In a Group, the same checks.
	var g Group
	wantArg(t, g.AlltoAll(c, nil, b40, r160, 10, Float32), "Group.AlltoAll", "send", "needs 160")
	wantArg(t, g.Gather(c, nil, b40, b40, 10, Float32, 1), "Group.Gather", "recv", "needs 160")
	wantArg(t, g.Scatter(c, nil, s160, b40, 10, Float32, 9), "Group.Scatter", "root")
	if g.Len() != 0 {
		t.Errorf("refused operations were added: %d", g.Len())
	}

	// Valid arguments: the missing function before 2.28.3, else as far as
	// the stream. Non-root ranks may pass nil for the root's Buffer.
	v, err := libVersion()
	if err != nil {
		t.Fatal(err)
	}
	has := v >= ncclb.VersionCodeOf(2, 28, 3)
	for _, cs := range []struct {
		fn, cfn string
		err     error
	}{
		{"AlltoAll", "ncclAlltoAll", c.AlltoAll(nil, s160, r160, 10, Float32)},
		{"AlltoAll", "ncclAlltoAll", c.AlltoAll(nil, lo, apart, 10, Float32)},
		{"AlltoAll", "ncclAlltoAll", AlltoAll[int32](c, nil, s160, r160, 10)},
		{"AlltoAll", "ncclAlltoAll", c.AlltoAll(nil, s160, r160, 0, Float32)},
		{"Gather", "ncclGather", c.Gather(nil, b40, r160, 10, Float32, 1)},
		{"Gather", "ncclGather", c.Gather(nil, b40, nil, 10, Float32, 0)},
		{"Gather", "ncclGather", Gather[uint32](c, nil, b40, nil, 10, 3)},
		{"Scatter", "ncclScatter", c.Scatter(nil, s160, b40, 10, Float32, 1)},
		{"Scatter", "ncclScatter", c.Scatter(nil, nil, b40, 10, Float32, 2)},
		{"Scatter", "ncclScatter", Scatter[int8](c, nil, nil, b40, 40, 0)},
		{"Group.AlltoAll", "ncclAlltoAll", g.AlltoAll(c, nil, s160, r160, 10, BFloat16)},
		{"Group.Gather", "ncclGather", g.Gather(c, nil, b40, r160, 20, Float16, 1)},
		{"Group.Scatter", "ncclScatter", g.Scatter(c, nil, nil, b40, 10, Uint32, 0)},
	} {
		if has {
			wantArg(t, cs.err, cs.fn, "stream", "stream is nil")
			continue
		}
		var missing *ncclb.MissingFunctionError
		if !errors.As(cs.err, &missing) || missing.Func != cs.cfn || missing.Need != "2.28.3" || missing.Have != ncclb.VersionString(v) ||
			!strings.HasPrefix(cs.err.Error(), "nccl: "+cs.fn+": "+cs.cfn+" is not available in ") || !strings.HasSuffix(cs.err.Error(), "it needs version 2.28.3 or newer") {
			t.Errorf("%s on NCCL %s: %v (%T), want a *MissingFunctionError needing 2.28.3", cs.fn, ncclb.VersionString(v), cs.err, cs.err)
		}
	}
	if g.Len() != 0 {
		t.Errorf("the group holds %d operations that its checks refused", g.Len())
	}

	// A closed communicator: ErrClosed, whatever the library.
	closed := fakeComm(dev, 0, 4)
	closed.closed.Store(true)
	for _, err := range []error{
		closed.AlltoAll(nil, s160, r160, 10, Float32),
		closed.Gather(nil, b40, r160, 10, Float32, 0),
		closed.Scatter(nil, s160, b40, 10, Float32, 0),
	} {
		if !errors.Is(err, core.ErrClosed) {
			t.Errorf("closed comm: %v, want ErrClosed", err)
		}
	}
}

// TestMissing228: before NCCL 2.28.3 the generated calls of ncclAlltoAll,
// ncclGather and ncclScatter return the bindings' *MissingFunctionError
// without calling anything (CI's Debian NCCL is 2.22.3).
func TestMissing228(t *testing.T) {
	v := olderThan(t, 2, 28, 3, "ncclAlltoAll, ncclGather and ncclScatter")
	for name, err := range map[string]error{
		"ncclAlltoAll": ncclAlltoAll(0, nil, nil, 1, 0, 0, 0),
		"ncclGather":   ncclGather(0, nil, nil, 1, 0, 0, 0, 0),
		"ncclScatter":  ncclScatter(0, nil, nil, 1, 0, 0, 0, 0),
	} {
		wantMissing(t, err, name, "2.28.3", v)
	}
}

// olderThan returns the loaded NCCL's version code, and skips t when it
// is x.y.z or newer, which has what.
func olderThan(t *testing.T, x, y, z int, what string) int {
	t.Helper()
	v, err := libVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v >= ncclb.VersionCodeOf(x, y, z) {
		t.Skipf("NCCL %s has %s", ncclb.VersionString(v), what)
	}
	return v
}

// wantMissing checks that err is the bindings' *MissingFunctionError for
// fn, which needs NCCL need, on the loaded NCCL of version code v.
func wantMissing(t *testing.T, err error, fn, need string, v int) {
	t.Helper()
	var missing *ncclb.MissingFunctionError
	if !errors.As(err, &missing) || missing.Func != fn || missing.Need != need || missing.Have != ncclb.VersionString(v) {
		t.Errorf("%s on NCCL %s: %v (%T), want a *MissingFunctionError needing %s", fn, ncclb.VersionString(v), err, err, need)
	}
}
