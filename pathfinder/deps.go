package pathfinder

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// maxDepDepth bounds the chain of dependencies loaded for one library
// (cuSOLVER -> cuSPARSE -> nvJitLink is the longest real one).
const maxDepDepth = 8

// depOrigins maps the real path of each library loaded as another's
// dependency to the place it came from, so that a later Load of it, which
// finds it already loaded, still says where it was found.
var depOrigins sync.Map

// depResult is what loadDeps did for one file.
type depResult struct {
	loaded   []string // files now loaded that the file needs, dependencies of dependencies first
	warnings []string
	missing  []string // sonames it needs that are neither loaded nor in the place
}

// loadDeps loads, before the file p of r.sp is opened, the libraries p
// needs from the place p is in: first p's own directory, then the
// directories where pl holds each dependency (for CUDA 12's pip wheels,
// nvidia/cublas/lib next to nvidia/cusolver/lib). Otherwise the loader
// would resolve p's DT_NEEDED entries through LD_LIBRARY_PATH, p's RUNPATH
// and ld.so.cache, which for a pip wheel finds nothing and elsewhere may
// find another install: loading them first by path makes the loader reuse
// them (it matches DT_NEEDED against the sonames already loaded, RTLD_LOCAL
// ones included).
//
// Only the sonames p names in DT_NEEDED are loaded, so the majors match
// (cuSOLVER 11 needs libcublas.so.12; CUDA 13's libcusparse.so.12 needs
// libnvJitLink.so.13), and a dependency that this version does not need is
// skipped. A dependency's own override variable (CUDAGO_CUBLASLT_PATH)
// wins, as it does for Load.
func (r *run) loadDeps(p string, pl place) depResult {
	needed, known := elfNeeded(p)
	return r.loadNeeded(p, pl, needed, known)
}

// loadNeeded loads those of r.sp's dependencies that are among the
// sonames needed (all of them, newest major first, when known is false),
// for the file p in pl.
func (r *run) loadNeeded(p string, pl place, needed []string, known bool) depResult {
	var res depResult
	if len(r.sp.deps) == 0 {
		return res
	}
	if r.depth >= maxDepDepth {
		res.warnings = append(res.warnings, fmt.Sprintf("dependencies of %s not loaded: chain deeper than %d", p, maxDepDepth))
		return res
	}
	for _, id := range r.sp.deps {
		ds := r.s.spec(id)
		if ds == nil {
			continue
		}
		names := ds.names()
		if known {
			names = slices.DeleteFunc(names, func(n string) bool { return !slices.Contains(needed, n) })
			if len(names) == 0 {
				continue // this version of the library does not need it
			}
		}
		// Only the names p needs, even where the user overrides the search.
		dn := *ds
		dn.sonames, dn.extra = names, nil
		sub := &run{s: r.s, sp: &dn, seen: map[string]bool{}, depth: r.depth + 1}
		if v := r.s.getenv(ds.env); v != "" {
			if lib := sub.override(v); lib != nil {
				res.add(lib)
			} else {
				res.warnings = append(res.warnings, fmt.Sprintf("dependency %s not loaded from %s=%s: %s", ds.lib, ds.env, v, lastErr(sub.tried)))
			}
			continue
		}

		// The copy in this place, if any (not opened yet).
		dirs := []string{filepath.Dir(p)}
		for _, sd := range pl.subdirs(ds) {
			if d := filepath.Join(pl.root, sd); !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
		var cand, candName string
	look:
		for _, n := range names {
			for _, d := range dirs {
				if f := filepath.Join(d, n); exists(f) {
					cand, candName = f, n
					break look
				}
			}
		}

		// Already in the process: the loader will reuse that one for p.
		if lp := loadedAs(names); lp != "" {
			res.note(lp)
			if cand != "" && realpath(cand) != realpath(lp) {
				res.warnings = append(res.warnings, fmt.Sprintf(
					"uses %s already loaded from %s, not the one in %s (%s)", filepath.Base(cand), lp, pl.where, cand))
			}
			continue
		}
		if cand == "" {
			res.missing = append(res.missing, names...)
			continue
		}
		if lib := sub.open(cand, pl, candName); lib != nil {
			res.add(lib)
		} else {
			res.warnings = append(res.warnings, fmt.Sprintf("dependency %s did not load: %s", cand, lastErr(sub.tried)))
			res.missing = append(res.missing, names...)
		}
	}
	return res
}

// loadSubs opens r.sp's sub-libraries from dir, the directory of the
// library just loaded from pl, in order, each after the dependencies it
// names in DT_NEEDED. One already loaded is reused (the loader would
// return it to the library's own dlopen anyway). Missing or refused ones
// are warnings: the library loads, and fails only in the calls that need
// them.
func (r *run) loadSubs(dir string, pl place) depResult {
	var res depResult
	var missing []string
	for _, sub := range r.sp.subs {
		f := filepath.Join(dir, sub)
		if lp := loadedAs([]string{sub}); lp != "" {
			res.note(lp)
			if exists(f) && realpath(f) != realpath(lp) {
				res.warnings = append(res.warnings, fmt.Sprintf(
					"uses %s already loaded from %s, not the one in %s (%s)", sub, lp, pl.where, f))
			}
			continue
		}
		if !exists(f) {
			if !slices.Contains(r.sp.optSubs, sub) {
				missing = append(missing, sub)
			}
			continue
		}
		res.merge(r.loadDeps(f, pl))
		if _, err := dlopen(f, false); err != nil {
			res.warnings = append(res.warnings, fmt.Sprintf("%s did not load (%v): the %s calls that need it will fail", f, err, r.sp.lib))
			continue
		}
		res.note(f)
	}
	if len(missing) > 0 {
		res.warnings = append(res.warnings, fmt.Sprintf(
			"%s missing from %s: the %s calls that need them will fail (cuDNN says CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED); reinstall %s",
			strings.Join(missing, ", "), dir, r.sp.lib, r.sp.lib))
	}
	return res
}

// merge adds what another loadDeps did.
func (res *depResult) merge(o depResult) {
	for _, p := range o.loaded {
		res.note(p)
	}
	res.warnings = append(res.warnings, o.warnings...)
	res.missing = append(res.missing, o.missing...)
}

// add records a dependency just loaded and what it brought along.
func (res *depResult) add(lib *Library) {
	depOrigins.Store(realpath(lib.Path), lib.Found)
	for _, c := range lib.Companions {
		res.note(c)
	}
	res.note(lib.Path)
	res.warnings = append(res.warnings, lib.Warnings...)
}

// note records a file the library uses, once (cuSOLVER's cuSPARSE brings
// the nvJitLink cuSOLVER needs too).
func (res *depResult) note(p string) {
	if !slices.Contains(res.loaded, p) {
		res.loaded = append(res.loaded, p)
	}
}

// usedDeps returns the files of r.sp's dependencies that are loaded and
// that the library at p names in DT_NEEDED: those the loader bound it to.
func (r *run) usedDeps(p string) []string {
	var res depResult
	needed, known := elfNeeded(p)
	if !known {
		return nil
	}
	for _, id := range r.sp.deps {
		if ds := r.s.spec(id); ds != nil {
			names := slices.DeleteFunc(ds.names(), func(n string) bool { return !slices.Contains(needed, n) })
			if lp := loadedAs(names); lp != "" {
				res.note(lp)
			}
		}
	}
	return res.loaded
}

// loadedAs returns the path of the first of names already loaded in the
// process, or "".
func loadedAs(names []string) string {
	for _, n := range names {
		if h := dlnoload(n); h != nil {
			if p := dlpath(h); p != "" {
				return p
			}
			return n
		}
	}
	return ""
}

// elfNeeded returns the DT_NEEDED entries of a shared object; ok is false
// when the file cannot be read as ELF.
func elfNeeded(path string) (needed []string, ok bool) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	needed, err = f.ImportedLibraries()
	return needed, err == nil
}

func lastErr(tried []Attempt) string {
	if len(tried) == 0 {
		return "not found"
	}
	return tried[len(tried)-1].String()
}

// exists reports whether p names a file (following symbolic links).
func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
