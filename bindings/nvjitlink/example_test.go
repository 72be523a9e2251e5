package nvjitlink_test

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/cudago/cudago/bindings/nvjitlink"
)

// Link one PTX module into a CUBIN for sm_80.
func Example() {
	ptx := seedPTX("kernel_part1")
	runtime.LockOSThread() // a handle stays on its OS thread
	defer runtime.UnlockOSThread()
	h, err := nvjitlink.Create(1, []string{"-arch=sm_80"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nvjitlink.Destroy(&h)
	if err := nvjitlink.AddData(h, nvjitlink.InputPtx, unsafe.Pointer(&ptx[0]), uint64(len(ptx)), "module1.ptx"); err != nil {
		fmt.Println(err)
		return
	}
	if err := nvjitlink.Complete(h); err != nil {
		fmt.Println(err)
		return
	}
	cubin, err := nvjitlink.LinkedCubin(h)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("linked an ELF: %q\n", cubin[1:4])
	// Output: linked an ELF: "ELF"
}
