// helper.cu: the device function of the host object and library in this
// directory, which the Linker tests link against. Regenerate with:
//   nvcc -rdc=true -c -arch=sm_90 -o helper.o helper.cu && ar rcs libhelper.a helper.o
__device__ float helper(float v) { return v * 2.0f + 1.0f; }
