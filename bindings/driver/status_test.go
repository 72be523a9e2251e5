package driver_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/cudago/cudago/bindings/driver"
)

// TestSticky checks the codes the generator derived from cuda.h's text:
// exactly those whose doc says the context or process cannot go on.
func TestSticky(t *testing.T) {
	want := map[driver.Result]bool{
		driver.ErrorContained:           true, // 226
		driver.ErrorIllegalAddress:      true, // 700
		driver.ErrorLaunchTimeout:       true, // 702
		driver.ErrorAssert:              true, // 710
		driver.ErrorHardwareStackError:  true, // 714
		driver.ErrorIllegalInstruction:  true, // 715
		driver.ErrorMisalignedAddress:   true, // 716
		driver.ErrorInvalidAddressSpace: true, // 717
		driver.ErrorInvalidPc:           true, // 718
		driver.ErrorLaunchFailed:        true, // 719
		driver.ErrorTensorMemoryLeak:    true, // 721
		driver.ErrorMpsClientTerminated: true, // 810
		driver.ErrorExternalDevice:      true, // 911
	}
	for r := driver.Result(0); r < 1100; r++ {
		if got := r.Sticky(); got != want[r] {
			t.Errorf("%v (%d).Sticky() = %v, want %v", r, int(r), got, want[r])
		}
	}
	for _, r := range []driver.Result{driver.ErrorCooperativeLaunchTooLarge, driver.ErrorUnknown, driver.ErrorOutOfMemory, driver.ErrorLaunchOutOfResources} {
		if r.Sticky() {
			t.Errorf("%v is sticky", r)
		}
	}
}

func TestExplanation(t *testing.T) {
	if got := driver.ErrorIllegalAddress.Explanation(); !strings.HasPrefix(got, "While executing a kernel, the device encountered a load or store instruction on an invalid memory address.") || strings.Contains(got, "\n") {
		t.Errorf("ErrorIllegalAddress.Explanation() = %q", got)
	}
	if got := driver.ErrorUnknown.Explanation(); got != "This indicates that an unknown internal error has occurred." {
		t.Errorf("ErrorUnknown.Explanation() = %q", got)
	}
	if got := driver.Result(123456).Explanation(); got != "" {
		t.Errorf("an unknown code explains itself as %q", got)
	}
	for r := driver.Result(0); r < 1100; r++ {
		if r.String() != "CUresult("+strconv.Itoa(int(r))+")" && r.Explanation() == "" {
			t.Errorf("%v has no explanation", r)
		}
	}
}
