package core

import "github.com/cudago/cudago/bindings/driver"

// Kernel is a GPU function of an ObjectCode. It is context-independent
// (a CUkernel): the same Kernel launches on any device the code loads on.
type Kernel struct {
	handle driver.Kernel
	name   string
	code   *ObjectCode // keeps the library loaded while the kernel lives
}

// newKernel is how ObjectCode hands out kernels.
func newKernel(h driver.Kernel, name string, code *ObjectCode) *Kernel {
	return &Kernel{handle: h, name: name, code: code}
}

// Name returns the kernel's name as it was looked up.
func (k *Kernel) Name() string { return k.name }

// Handle returns the driver's CUkernel.
func (k *Kernel) Handle() driver.Kernel { return k.handle }
