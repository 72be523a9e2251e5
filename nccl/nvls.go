package nccl

import "os"

// NVLink SHARP (NVLS) makes NCCL reduce inside the NVSwitch, through CUDA
// multicast objects (cuMulticastCreate). It needs setup beyond the driver
// (the fabric manager's multicast support, IMEX channels for several
// nodes), and multicast is not allowed on the machines this package is
// tested on, so it is off unless asked for: NCCL_NVLS_ENABLE=0, set here
// at start-up, before anything can load NCCL (which reads it when it
// first initializes). A value the user set, 1 included, is kept.
func init() {
	if _, set := os.LookupEnv("NCCL_NVLS_ENABLE"); !set {
		os.Setenv("NCCL_NVLS_ENABLE", "0")
	}
}
