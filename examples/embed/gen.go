package main

// kernels.fatbin holds kernels.cu compiled for sm_80 and sm_90 (cubins) and
// the sm_90 PTX, which the driver JITs for newer GPUs. Regenerate it with
// 'go generate' after changing kernels.cu; cmd/cudago's tests check that the
// committed file matches.

//go:generate go run github.com/cudago/cudago/cmd/cudago build -arch sm_80,sm_90 -o kernels.fatbin kernels.cu
