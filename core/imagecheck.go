package core

import (
	"fmt"

	"github.com/cudago/cudago/fatbin"
)

// checkImage refuses an image that is not sound before it reaches the
// driver (cuLibraryLoadData, cuLinkAddData) or nvJitLink, which trust the
// offsets, sizes and indices in it: a damaged cubin crashed libcuda
// (docs/reliability.md). A cubin goes through fatbin.ValidateCubin; a fat
// binary must parse (fatbin.Parse: containers and entries inside the
// data) and each of its cubins, decompressed, must pass it. Other code
// passes unchecked: PTX and LTO-IR are parsed by the compilers, and host
// objects and libraries (linker inputs only) are not looked into. The
// result is computed once per ObjectCode (its code never changes); an
// error matches ErrInvalidCode.
func (o *ObjectCode) checkImage() error {
	o.imageOnce.Do(func() {
		var err error
		switch o.codeType {
		case CodeCubin:
			err = fatbin.ValidateCubin(o.code)
		case CodeFatbin:
			var f *fatbin.File
			if f, err = fatbin.Parse(o.code); err == nil {
				err = f.ValidateCubins()
			}
		}
		if err != nil {
			o.imageErr = fmt.Errorf("%w: %w", ErrInvalidCode, err)
		}
	})
	return o.imageErr
}
