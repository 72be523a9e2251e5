package pathfinder

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// pythonTimeout bounds the one question pathfinder asks python3: a Python
// starts in well under a second; one that hangs must not hang Load.
const pythonTimeout = 3 * time.Second

// pip searches the site-packages directories of the Python environment for
// NVIDIA's pip wheels (nvidia/cu13/lib, nvidia/<lib>/lib): those named by
// CUDAGO_PYTHON_SITE, or else VIRTUAL_ENV's, then those of the python3 on
// PATH.
func (r *run) pip() *Library {
	if len(r.sp.wheel) == 0 {
		return nil // no wheel ships it
	}
	var lib *Library
	r.s.eachSite(r.note, func(where, dir string) bool {
		lib = r.root(place{where, dir, wheelSubdirs}, 0)
		return lib != nil
	})
	return lib
}

// eachSite calls try with each site-packages directory of the Python
// environment, in order, until it returns true: those of
// CUDAGO_PYTHON_SITE (which replaces the others; "off" turns them all
// off), else VIRTUAL_ENV's, newest Python first, then those of the python3
// on PATH, which is asked only when it comes to that. Each directory is
// tried once. note records why a place gave no directory.
func (s *searcher) eachSite(note func(path, where, err string), try func(where, dir string) bool) {
	if v := s.getenv("CUDAGO_PYTHON_SITE"); v != "" {
		const where = "CUDAGO_PYTHON_SITE"
		if v == "off" {
			note("", where, "off: pip wheels are not searched")
			return
		}
		for _, d := range filepath.SplitList(v) {
			if d != "" && try(where, s.abs(d)) {
				return
			}
		}
		return
	}
	done := map[string]bool{} // site directories searched, by real path
	site := func(where, dir string) bool {
		if key := realpath(dir); !done[key] {
			done[key] = true
			return try(where, dir)
		}
		return false
	}

	const venvWhere = "VIRTUAL_ENV"
	if venv := s.getenv("VIRTUAL_ENV"); venv == "" {
		note("", venvWhere, "not set")
	} else if dirs := venvSites(s.abs(venv)); len(dirs) == 0 {
		note(s.abs(venv), venvWhere, "no lib/python3.*/site-packages")
	} else {
		for _, d := range dirs {
			if site(venvWhere, d) {
				return
			}
		}
	}

	const pyWhere = "python3 site-packages"
	py := findInPath(s.getenv("PATH"), "python3")
	if py == "" {
		note("", pyWhere, "no python3 on PATH")
		return
	}
	probe := s.python
	if probe == nil {
		probe = defaultPython
	}
	dirs, err := probe.sites(py)
	switch {
	case err != nil:
		note(py, pyWhere, err.Error())
		return
	case len(dirs) == 0:
		note(py, pyWhere, "it reported no site-packages directory")
		return
	}
	for _, d := range dirs {
		if site(pyWhere, d) {
			return
		}
	}
}

// venvSites returns the site-packages directories of a virtual
// environment, the newest Python first.
func venvSites(venv string) []string {
	dirs, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	minor := func(d string) int {
		v := strings.TrimPrefix(filepath.Base(filepath.Dir(d)), "python3.")
		n, err := strconv.Atoi(strings.TrimRight(v, "tdm")) // python3.13t: free-threaded
		if err != nil {
			return -1
		}
		return n
	}
	sort.SliceStable(dirs, func(i, j int) bool { return minor(dirs[i]) > minor(dirs[j]) })
	return dirs
}

// findInPath returns the first executable file named name in the
// directories of pathList, or "". Relative entries are skipped: what they
// name would depend on the working directory.
func findInPath(pathList, name string) string {
	for _, dir := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// pythonProbe asks each python3 for its site-packages directories once and
// remembers the answer (or the failure).
type pythonProbe struct {
	timeout time.Duration
	mu      sync.Mutex
	answers map[string]*pythonAnswer
}

type pythonAnswer struct {
	once  sync.Once
	sites []string
	err   error
}

var defaultPython = &pythonProbe{timeout: pythonTimeout}

// pythonScript prints the directories pip installs into: the environment's
// site-packages and the user's (pip install --user).
const pythonScript = `import site, sys
try:
    dirs = site.getsitepackages()
except AttributeError:  # virtualenv before 20 replaces site.py without it
    dirs = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
try:
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
except AttributeError:
    pass
print("\n".join(dirs))
`

func (p *pythonProbe) sites(python string) ([]string, error) {
	p.mu.Lock()
	if p.answers == nil {
		p.answers = map[string]*pythonAnswer{}
	}
	a := p.answers[python]
	if a == nil {
		a = new(pythonAnswer)
		p.answers[python] = a
	}
	p.mu.Unlock()
	a.once.Do(func() { a.sites, a.err = askPython(python, p.timeout) })
	return a.sites, a.err
}

// askPython runs python -c pythonScript and returns the existing
// directories it printed.
func askPython(python string, timeout time.Duration) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-c", pythonScript)
	var stdout, stderr cappedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// The child's own children (a wrapper script's) are killed with it, and
	// Wait does not wait for output they still hold open.
	killProcessGroup(cmd)
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("no answer within %v (killed)", timeout)
	}
	if err != nil {
		msg := strings.TrimSpace(string(stderr.b))
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:] // a traceback's last line says what went wrong
		}
		if msg != "" {
			return nil, fmt.Errorf("asking it for site-packages failed: %v: %s", err, msg)
		}
		return nil, fmt.Errorf("asking it for site-packages failed: %v", err)
	}
	var dirs []string
	for _, line := range strings.Split(string(stdout.b), "\n") {
		d := strings.TrimSpace(line)
		if !filepath.IsAbs(d) {
			continue
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			dirs = append(dirs, filepath.Clean(d))
		}
	}
	return dirs, nil
}

// cappedBuffer keeps the first 64 KiB written to it and drops the rest
// without failing the writer.
type cappedBuffer struct{ b []byte }

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := 64<<10 - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
