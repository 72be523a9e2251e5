package driver_test

import (
	"errors"
	"fmt"

	"github.com/cudago/cudago/bindings/driver"
)

// Ask the driver which CUDA version it supports (12040 is CUDA 12.4).
func ExampleDriverGetVersion() {
	v, err := driver.DriverGetVersion()
	if err != nil {
		fmt.Println("no driver:", err)
		return
	}
	fmt.Printf("CUDA %d.%d\n", v/1000, v%1000/10)
}

// Driver errors match their status code with errors.Is.
func Example_errors() {
	var err error = &driver.Error{Lib: "driver", Func: "cuInit", Code: driver.ErrorNoDevice}
	fmt.Println(errors.Is(err, driver.ErrorNoDevice), driver.ErrorNoDevice)
	// Output: true CUDA_ERROR_NO_DEVICE
}
