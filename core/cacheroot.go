package core

import (
	"fmt"
	"os"
	"sync"
	"syscall"
)

// The cache holds GPU code that the next run loads, so its folder must be
// the user's alone, as ssh requires of ~/.ssh: on a shared machine another
// user could otherwise plant an entry. checkCacheRoot creates the root
// 0700 when it is missing, and refuses (with one warning per folder per
// process, compiling without the cache) a root that is not a directory
// owned by the user, or that group or others may write (the warning is
// WarnCacheDisabled).

// cacheRoots remembers each root's verdict (nil: usable).
var cacheRoots sync.Map // string -> error

func checkCacheRoot(dir string) error {
	if v, ok := cacheRoots.Load(dir); ok {
		err, _ := v.(error)
		return err
	}
	err := inspectCacheRoot(dir)
	if _, loaded := cacheRoots.LoadOrStore(dir, err); !loaded && err != nil {
		warn(WarnCacheDisabled, "compile cache disabled: "+err.Error(), "dir", dir, "err", err)
	}
	return err
}

func inspectCacheRoot(dir string) error {
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to user %d, not to this user (%d); set CUDAGO_CACHE_DIR to a folder of your own", dir, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by group or others (mode %v); chmod go-w it or set CUDAGO_CACHE_DIR", dir, fi.Mode().Perm())
	}
	return nil
}
