package nvfatbin_test

import (
	"fmt"

	"github.com/cudago/cudago/bindings/nvfatbin"
)

// Pack PTX for compute_90 into a fatbin.
func Example() {
	const ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n"
	h, err := nvfatbin.Create([]string{"-cuda"}, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nvfatbin.Destroy(&h)
	if err := nvfatbin.AddPTX(h, ptx, uint64(len(ptx)), "90", "k", ""); err != nil {
		fmt.Println(err)
		return
	}
	fatbin, err := nvfatbin.Bytes(h)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("fatbin magic %#x\n", uint32(fatbin[0])|uint32(fatbin[1])<<8|uint32(fatbin[2])<<16|uint32(fatbin[3])<<24)
	// Output: fatbin magic 0xba55ed50
}
