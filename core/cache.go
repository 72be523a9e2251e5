package core

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cudago/cudago/bindings/nvjitlink"
	"github.com/cudago/cudago/bindings/nvrtc"
	"github.com/cudago/cudago/bindings/nvvm"
	"github.com/cudago/cudago/internal/fsutil"
)

// The compile cache.
//
// Program.Compile and Linker.Link keep what they produce in a persistent,
// content-addressed cache on disk, so that compiling the same program again
// (in this process or any later one) reads the result back instead of
// running the compiler: a hit costs tens of microseconds where NVRTC takes
// milliseconds to seconds.
//
// Location: $CUDAGO_CACHE_DIR when set, else os.UserCacheDir()/cudago
// (~/.cache/cudago on Linux, honouring $XDG_CACHE_HOME). CUDAGO_CACHE=off
// (or 0, false, no) turns the cache off; CUDAGO_CACHE_MAX bounds its size
// in bytes (suffixes K, M, G; default 1 GiB): when it grows past the bound
// the least recently used entries (by modification time, which a hit
// refreshes at most hourly) are removed.
//
// Key: a SHA-256 of the source, the in-memory headers (names and
// contents), the rendered compiler options, the name expressions, the
// target, the architecture, the program name and the version of every
// compiler involved (NVRTC, NVVM, nvJitLink, or the driver for the cuLink
// fallback). Programs whose result depends on files the key cannot see —
// IncludePaths, PreIncludes, precompiled headers, -I/--include-path/
// --pre-include in Extra, or an #include "name" that Headers does not
// provide (NVRTC reads it from disk) — bypass the cache, as do PTX-to-PTX
// "compilations" and programs with NoCache.
//
// Entries are written to a temporary file and renamed into place, so that
// several processes may share the cache; every entry carries a SHA-256 of
// its content, checked on every read: a corrupted or truncated entry is
// removed and the code is compiled again. Only successful compilations are
// cached.

// DefaultCacheMaxBytes is the default size bound of the compile cache.
const DefaultCacheMaxBytes = 1 << 30

// cacheFormat versions the key and the entry layout.
const cacheFormat = "cudago-compile-cache-v1"

var cacheMagic = []byte("CUDAGOC1")

// CacheDir returns the directory of the compile cache:
// $CUDAGO_CACHE_DIR, else os.UserCacheDir()/cudago.
func CacheDir() (string, error) {
	if d := os.Getenv("CUDAGO_CACHE_DIR"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "cudago"), nil
}

// CacheEnabled reports whether the compile cache is on (CUDAGO_CACHE is
// not "off", "0", "false" or "no").
func CacheEnabled() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv("CUDAGO_CACHE"))) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

// badCacheMax are the values of CUDAGO_CACHE_MAX already warned about.
var badCacheMax sync.Map

// cacheMaxBytes reads CUDAGO_CACHE_MAX (bytes; K, M, G suffixes).
func cacheMaxBytes() int64 {
	s := strings.TrimSpace(os.Getenv("CUDAGO_CACHE_MAX"))
	if s == "" {
		return DefaultCacheMaxBytes
	}
	mul := int64(1)
	switch strings.ToUpper(s[len(s)-1:]) {
	case "K":
		mul = 1 << 10
	case "M":
		mul = 1 << 20
	case "G":
		mul = 1 << 30
	}
	if mul != 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mul {
		// Unreadable or overflowing: the default, said once per value.
		if _, said := badCacheMax.LoadOrStore(os.Getenv("CUDAGO_CACHE_MAX"), true); !said {
			warn(WarnBadSetting, "CUDAGO_CACHE_MAX is not a size in bytes (K, M, G suffixes): the default bound is used",
				"variable", "CUDAGO_CACHE_MAX", "value", os.Getenv("CUDAGO_CACHE_MAX"), "default", DefaultCacheMaxBytes)
		}
		return DefaultCacheMaxBytes
	}
	return n * mul
}

// diskCache is one cache directory.
type diskCache struct {
	dir string
	max int64
}

// cacheState is per-process bookkeeping of the trimming.
var cacheState struct {
	mu         sync.Mutex
	lastTrim   map[string]time.Time // by directory
	sinceTrim  map[string]int64     // bytes written since the last trim
	hits, miss atomic.Int64
	corrupt    atomic.Int64
}

// activeCache returns the cache to use now, or nil when it is off.
func activeCache() *diskCache {
	if !CacheEnabled() {
		return nil
	}
	dir, err := CacheDir()
	if err != nil || dir == "" || checkCacheRoot(dir) != nil {
		return nil
	}
	return &diskCache{dir: dir, max: cacheMaxBytes()}
}

// cacheEntry is what an entry holds besides the code.
type cacheEntry struct {
	Key      string            `json:"key"`
	Type     string            `json:"type"`
	Name     string            `json:"name,omitempty"`
	Symbols  map[string]string `json:"symbols,omitempty"`
	Log      string            `json:"log,omitempty"`
	InfoLog  string            `json:"info_log,omitempty"`
	Lowered  map[string]string `json:"lowered,omitempty"`
	Compiled time.Time         `json:"compiled"`
	code     []byte
}

func (c *diskCache) path(key string) string {
	return filepath.Join(c.dir, key[:2], key+".cgc")
}

// encode lays out an entry: magic, metadata length (u32), metadata (JSON),
// code length (u64), code, SHA-256 of all that.
func (e *cacheEntry) encode() ([]byte, error) {
	meta, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	n := len(cacheMagic) + 4 + len(meta) + 8 + len(e.code) + sha256.Size
	b := make([]byte, 0, n)
	b = append(b, cacheMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(meta)))
	b = append(b, meta...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(e.code)))
	b = append(b, e.code...)
	sum := sha256.Sum256(b)
	return append(b, sum[:]...), nil
}

// decodeEntry verifies and parses an entry of key.
func decodeEntry(b []byte, key string) (*cacheEntry, error) {
	if len(b) < len(cacheMagic)+4+8+sha256.Size || !bytes.Equal(b[:len(cacheMagic)], cacheMagic) {
		return nil, errCorrupt
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, errCorrupt
	}
	r := body[len(cacheMagic):]
	ml := int(binary.LittleEndian.Uint32(r))
	r = r[4:]
	if ml < 0 || ml > len(r)-8 {
		return nil, errCorrupt
	}
	var e cacheEntry
	if err := json.Unmarshal(r[:ml], &e); err != nil {
		return nil, errCorrupt
	}
	r = r[ml:]
	cl := binary.LittleEndian.Uint64(r)
	r = r[8:]
	if cl != uint64(len(r)) || e.Key != key || e.Type == "" {
		return nil, errCorrupt
	}
	e.code = r
	return &e, nil
}

// get returns the entry of key, or nil on a miss. A corrupted or
// truncated entry is removed and reported as a miss.
func (c *diskCache) get(key string) *cacheEntry {
	p := c.path(key)
	b, err := os.ReadFile(p)
	if err != nil {
		cacheState.miss.Add(1)
		return nil
	}
	e, err := decodeEntry(b, key)
	if err != nil {
		cacheState.corrupt.Add(1)
		cacheState.miss.Add(1)
		os.Remove(p)
		return nil
	}
	cacheState.hits.Add(1)
	// Refresh the LRU time, at most hourly (one stat is cheap, a write
	// per hit is not).
	if fi, err := os.Stat(p); err == nil && time.Since(fi.ModTime()) > time.Hour {
		now := time.Now()
		os.Chtimes(p, now, now)
	}
	return e
}

// put writes an entry: to a temporary file in the entry's directory, then
// renamed into place, so that readers never see a partial entry.
func (c *diskCache) put(e *cacheEntry) error {
	b, err := e.encode()
	if err != nil {
		return err
	}
	p := c.path(e.Key)
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := fsutil.WriteAtomic(p, b, 0o600); err != nil {
		return err
	}
	c.maybeTrim(int64(len(b)))
	return nil
}

// maybeTrim trims the cache after a write once a tenth of the bound has
// been written since the last trim, or a minute has passed.
func (c *diskCache) maybeTrim(written int64) {
	cacheState.mu.Lock()
	if cacheState.lastTrim == nil {
		cacheState.lastTrim = map[string]time.Time{}
		cacheState.sinceTrim = map[string]int64{}
	}
	cacheState.sinceTrim[c.dir] += written
	last, ok := cacheState.lastTrim[c.dir]
	due := !ok || time.Since(last) > time.Minute || cacheState.sinceTrim[c.dir] > c.max/10
	if due {
		cacheState.lastTrim[c.dir] = time.Now()
		cacheState.sinceTrim[c.dir] = 0
	}
	cacheState.mu.Unlock()
	if due {
		c.trim()
	}
}

// trim removes the least recently used entries until the cache holds at
// most c.max bytes, and temporary files left over by dead writers.
func (c *diskCache) trim() error {
	type file struct {
		path  string
		size  int64
		mtime time.Time
	}
	var files []file
	var total int64
	// Only the cache's own two-hex-digit folders are walked: the cache
	// directory may be shared with other files.
	subs, err := filepath.Glob(filepath.Join(c.dir, "[0-9a-f][0-9a-f]"))
	if err != nil {
		return err
	}
	walk := func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		name := d.Name()
		if strings.HasPrefix(name, fsutil.TempPrefix) { // left by a crashed write
			if time.Since(fi.ModTime()) > time.Hour {
				os.Remove(p)
			}
			return nil
		}
		if !strings.HasSuffix(name, ".cgc") {
			return nil
		}
		files = append(files, file{p, fi.Size(), fi.ModTime()})
		total += fi.Size()
		return nil
	}
	for _, sub := range subs {
		filepath.WalkDir(sub, walk)
	}
	if total <= c.max {
		return nil
	}
	slices.SortFunc(files, func(a, b file) int { return a.mtime.Compare(b.mtime) })
	for _, f := range files {
		if total <= c.max {
			break
		}
		if rerr := os.Remove(f.path); rerr == nil || errors.Is(rerr, fs.ErrNotExist) {
			total -= f.size
		}
	}
	return nil
}

// ---- keys ----

// cacheKeyer builds a key: length-prefixed fields into a SHA-256.
type cacheKeyer struct{ h hash.Hash }

func newKeyer(kind string) *cacheKeyer {
	k := &cacheKeyer{h: sha256.New()}
	k.add(cacheFormat)
	k.add(kind)
	return k
}

func (k *cacheKeyer) add(s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	k.h.Write(n[:])
	k.h.Write([]byte(s))
}

func (k *cacheKeyer) addBytes(b []byte) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
	k.h.Write(n[:])
	k.h.Write(b)
}

func (k *cacheKeyer) addList(name string, l []string) {
	k.add(name)
	k.add(strconv.Itoa(len(l)))
	for _, s := range l {
		k.add(s)
	}
}

func (k *cacheKeyer) addMap(name string, m map[string]string) {
	k.add(name)
	k.add(strconv.Itoa(len(m)))
	for _, n := range slices.Sorted(maps.Keys(m)) {
		k.add(n)
		k.add(m[n])
	}
}

func (k *cacheKeyer) sum() string { return hex.EncodeToString(k.h.Sum(nil)) }

// The compilers' versions, read once (a failure: no caching).
var (
	nvrtcVersion = libVersion("nvrtc", nvrtc.Version)
	nvvmVersion  = sync.OnceValue(func() string {
		ma, mi, err := nvvm.Version()
		if err != nil {
			return ""
		}
		a, b, c, d, err := nvvm.IRVersion()
		if err != nil {
			return ""
		}
		return "nvvm " + strconv.Itoa(int(ma)) + "." + strconv.Itoa(int(mi)) +
			" ir " + strconv.Itoa(int(a)) + "." + strconv.Itoa(int(b)) + "." + strconv.Itoa(int(c)) + "." + strconv.Itoa(int(d))
	})
	nvjitlinkVersion = libVersion("nvjitlink", nvjitlink.Version)
	driverVersion    = sync.OnceValue(func() string {
		if ensureInit() != nil {
			return ""
		}
		v, err := cuDriverGetVersion()
		if err != nil {
			return ""
		}
		return "driver " + strconv.Itoa(int(v))
	})
)

// libVersion reads the version of library name once, with version: "name
// major.minor", or "" when it fails.
func libVersion[N int32 | uint32](name string, version func() (N, N, error)) func() string {
	return sync.OnceValue(func() string {
		ma, mi, err := version()
		if err != nil {
			return ""
		}
		return name + " " + strconv.Itoa(int(ma)) + "." + strconv.Itoa(int(mi))
	})
}

// linkerVersion is the version of what links: nvJitLink, or the driver.
func linkerVersion(useDriver bool) string {
	if useDriver {
		return driverVersion()
	}
	return nvjitlinkVersion()
}

var quotedInclude = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"`)

// readsFiles reports whether the source, or one of the in-memory headers,
// has an #include "name" that the headers do not provide: NVRTC reads it
// from the file system, where the key cannot see it. (Angle-bracket
// includes come from NVRTC's own headers, versioned with it, or from
// include paths, which bypass the cache anyway.)
func readsFiles(src string, headers map[string]string) bool {
	for _, text := range append([]string{src}, slices.Collect(maps.Values(headers))...) {
		for _, m := range quotedInclude.FindAllStringSubmatch(text, -1) {
			if _, ok := headers[m[1]]; !ok {
				return true
			}
		}
	}
	return false
}

// uncacheableExtra reports options that read files the key cannot see.
func uncacheableExtra(extra []string) bool {
	for _, e := range extra {
		for _, p := range []string{"-I", "--include-path", "-include", "--pre-include", "--pch", "-pch", "--use-pch", "--create-pch", "-dependency", "--dependency", "-M"} {
			if strings.HasPrefix(e, p) {
				return true
			}
		}
	}
	return false
}

// cacheKey returns the key of compiling p to target, or false when the
// result must not be cached. Called with p.mu held.
func (p *Program) cacheKey(target string) (string, bool) {
	o := &p.opts
	if p.codeType == "ptx" && target == CodePTX {
		return "", false // nothing is compiled: no cache
	}
	if p.codeType == "c++" && readsFiles(p.code, o.Headers) {
		return "", false
	}
	if o.NoCache || len(o.IncludePaths) > 0 || len(o.PreIncludes) > 0 || o.PCH || o.CreatePCH != "" ||
		o.UsePCH != "" || o.PCHDir != "" || uncacheableExtra(o.Extra) {
		return "", false
	}
	k := newKeyer("program")
	k.add(p.codeType)
	k.add(target)
	k.add(o.name())
	k.add(p.code)
	k.addMap("headers", o.Headers)
	k.addList("args", p.args)
	k.addList("names", o.NameExpressions)
	k.add(strconv.FormatBool(o.LTO))
	// The architecture: what Compile passes, resolved as it resolves it.
	arch := o.Arch
	if target == CodeCubin || o.Arch == "" && p.codeType == "ptx" {
		if a, err := p.realArch(); err == nil {
			arch = a
		} else if p.codeType != "ptx" {
			return "", false
		}
	}
	k.add(arch)
	var vers []string
	switch p.codeType {
	case "c++":
		vers = append(vers, nvrtcVersion())
	case "nvvm":
		vers = append(vers, nvvmVersion())
		if target == CodeCubin {
			vers = append(vers, nvjitlinkOrDriver())
		}
	case "ptx":
		if target == CodeCubin {
			vers = append(vers, nvjitlinkOrDriver())
		}
	}
	// The nvJitLink step's options (what linkPTX passes), rendered with a
	// placeholder architecture: the real one is keyed above. An option
	// set that does not render is not cached.
	if p.codeType == "ptx" || p.codeType == "nvvm" && target == CodeCubin {
		a, err := o.linkerOptions(cacheArchPlaceholder, p.codeType == "ptx").NVJitLinkOptions()
		if err != nil {
			return "", false
		}
		k.addList("link", a)
	}
	for _, v := range vers {
		if v == "" {
			return "", false
		}
		k.add(v)
	}
	return k.sum(), true
}

// cacheArchPlaceholder stands for the architecture when linker options
// are rendered for a key (which holds the real one separately).
const cacheArchPlaceholder = "sm_90"

// nvjitlinkOrDriver is the version of what NewLinker would pick.
func nvjitlinkOrDriver() string {
	if v := nvjitlinkVersion(); v != "" {
		return v
	}
	return driverVersion()
}

// compileCached is Compile behind the cache, for each target. It
// compiles (all targets, so that those of one compilation stay one) unless
// every target hits. Called with p.mu held.
func (p *Program) compileCached(targets []string) ([]*ObjectCode, error) {
	c := activeCache()
	keys := make([]string, len(targets))
	for i := range targets {
		if c == nil {
			break
		}
		var ok bool
		if keys[i], ok = p.cacheKey(targets[i]); !ok {
			c = nil
		}
	}
	if c != nil {
		if out := p.cacheHits(c, keys); out != nil {
			return out, nil
		}
		p.log = "" // a partial hit's
	}
	out, err := p.compileBackend(targets)
	if err != nil || c == nil {
		return out, err
	}
	for i, o := range out {
		e := &cacheEntry{Key: keys[i], Type: o.codeType, Name: o.name, Symbols: o.symbols,
			Log: p.log, Compiled: time.Now().UTC(), code: o.code}
		if p.codeType == "c++" {
			e.Lowered = p.lowered
		}
		c.put(e) // a cache that cannot be written is no error
	}
	return out, nil
}

// cacheHits returns the entries of keys, or nil unless all are there. It
// restores the log and the lowered names of the last.
func (p *Program) cacheHits(c *diskCache, keys []string) []*ObjectCode {
	out := make([]*ObjectCode, len(keys))
	for i, key := range keys {
		e := c.get(key)
		if e == nil {
			return nil
		}
		p.log = e.Log
		if p.codeType == "c++" {
			p.lowered = maps.Clone(e.Lowered)
			if p.lowered == nil {
				p.lowered = map[string]string{}
			}
		}
		out[i] = newObjectCode(e.Type, e.code, e.Name, e.Symbols, nil)
	}
	return out
}

// linkCacheKey returns the key of linking l's inputs to target, or false.
// Called with l.mu held.
func (l *Linker) linkCacheKey(target string) (string, bool) {
	if l.opts.NoCache || uncacheableExtra(l.opts.Extra) {
		return "", false
	}
	v := linkerVersion(l.driver)
	if v == "" {
		return "", false
	}
	k := newKeyer("link")
	k.add(v)
	k.add(target)
	k.addList("args", l.args)
	k.add(strconv.Itoa(len(l.inputs)))
	for i, c := range l.inputs {
		k.add(c.codeType)
		k.add(l.inputName(i, c))
		s := sha256.Sum256(c.code)
		k.addBytes(s[:])
	}
	return k.sum(), true
}

// linkCached looks target up in the cache (nil, "", false on a miss); on
// a hit it restores the logs and returns the code.
func (l *Linker) linkCached(target string) (out []byte, key string, c *diskCache) {
	if c = activeCache(); c == nil {
		return nil, "", nil
	}
	key, ok := l.linkCacheKey(target)
	if !ok {
		return nil, "", nil
	}
	if e := c.get(key); e != nil {
		l.errorLog, l.infoLog = e.Log, e.InfoLog
		return e.code, key, nil
	}
	return nil, key, c
}

// linkStore stores a link's result after linkCached missed.
func (l *Linker) linkStore(c *diskCache, key, target string, out []byte) {
	if c == nil {
		return
	}
	c.put(&cacheEntry{Key: key, Type: target, Log: l.errorLog, InfoLog: l.infoLog,
		Compiled: time.Now().UTC(), code: out})
}
