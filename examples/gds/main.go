// Command gds moves a file through GPU memory with GPUDirect Storage
// (package gds, over cuFile): it writes 8 MiB + 5 bytes of data to a
// temporary file, reads the file into a GPU buffer, writes that buffer to
// a second file on a stream, and checks both byte for byte; then reads an
// unaligned range of the file into a view in the middle of the buffer.
//
// Without the nvidia-fs kernel module cuFile works in its compatibility
// mode (POSIX I/O through host memory), which this program allows, unless
// the environment already says otherwise, by setting
// CUFILE_ALLOW_COMPAT_MODE=true before the driver opens.
//
// The files go in a new folder under the argument, or the temporary folder
// (cuFile refuses some file systems: give a folder on a disk if it says
// so). cuFile registers a file only when the udev database has the record
// of the block device under it (/run/udev/data/b<major>:<minor>); on a
// machine without one (a VM or container without udev) it prints the
// record to write. Without a GPU, or without that record, it says the
// transfers were not run and exits 0; it exits 1 on any other error or a
// wrong byte.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/examples/internal/demo"
	"github.com/cudago/cudago/gds"
)

const size = 8<<20 + 5

func main() {
	if err := run(); err != nil {
		if ue := (*gds.UdevError)(nil); errors.As(err, &ue) {
			// The machine, not the program: cuFile cannot find the file's
			// volume without udev's record of it.
			fmt.Printf("cuFile registers no file in this folder, so the transfers were not run.\n%s\nfix: %s\n", ue.Entry.Problem, ue.Entry.Fix)
			return
		}
		fmt.Fprintln(os.Stderr, "gds:", err)
		os.Exit(1)
	}
}

func run() error {
	dev := demo.Device("the GPUDirect Storage transfers were not run")
	if dev == nil {
		return nil
	}
	// cuFile reads its configuration when its driver opens: first.
	if os.Getenv("CUFILE_ALLOW_COMPAT_MODE") == "" {
		os.Setenv("CUFILE_ALLOW_COMPAT_MODE", "true")
	}
	info, err := gds.Driver()
	if err != nil {
		return err
	}
	fmt.Printf("cuFile %s, %v mode\n", info.Version, info.Mode)

	parent := os.TempDir()
	if len(os.Args) > 1 {
		parent = os.Args[1]
	}
	dir, err := os.MkdirTemp(parent, "cudago-gds-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	data := make([]byte, size)
	rand.NewChaCha8([32]byte{1}).Read(data)
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	if err := os.WriteFile(in, data, 0o600); err != nil {
		return err
	}

	buf, err := dev.Allocate(size, nil)
	if err != nil {
		return err
	}
	defer buf.Close()
	if err := dev.Sync(); err != nil { // the allocation, before a transfer that does not wait for streams
		return err
	}

	// The file into the buffer.
	f, err := gds.Open(in, os.O_RDONLY, 0, nil)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := f.ReadAt(buf, 0)
	if err != nil {
		return err
	}
	got := make([]byte, size)
	if err := core.CopyFromDevice(got, buf); err != nil {
		return err
	}
	if !bytes.Equal(got, data) {
		return fmt.Errorf("the buffer differs from the file")
	}
	fmt.Printf("read %d bytes into GPU memory (O_DIRECT: %t)\n", n, f.Direct())

	// The buffer into a new file, on a stream.
	s, err := dev.NewStream(nil)
	if err != nil {
		return err
	}
	defer s.Close()
	g, err := gds.Open(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600, nil)
	if err != nil {
		return err
	}
	defer g.Close()
	p, err := g.WriteAtAsync(s, buf, 0)
	if err != nil {
		return err
	}
	if n, err = p.Wait(); err != nil {
		return err
	}
	back, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	if !bytes.Equal(back, data) {
		return fmt.Errorf("the written file differs")
	}
	fmt.Printf("wrote %d bytes back on a stream\n", n)

	// An unaligned range of the file into the middle of the buffer.
	view, err := buf.View(1001, 77777)
	if err != nil {
		return err
	}
	if _, err := f.ReadAt(view, 123457); err != nil {
		return err
	}
	part := make([]byte, view.Size())
	if err := core.CopyFromDevice(part, view); err != nil {
		return err
	}
	if !bytes.Equal(part, data[123457:123457+77777]) {
		return fmt.Errorf("the view differs from the file's range")
	}
	fmt.Printf("read %d bytes at offset 123457 into a view at offset 1001: ok\n", len(part))
	return nil
}
