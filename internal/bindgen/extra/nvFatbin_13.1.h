/*
 * Declarations of nvFatbin functions newer than the newest header in
 * ../shared/cuda-headers, written by cudago from NVIDIA's nvFatbin
 * documentation so that the bindings cover them. A library that lacks one
 * returns an error naming the version it needs.
 */
#include <nvFatbin.h>

/**
 * \ingroup generation
 * \brief nvFatbinAddTileIR adds Tile IR to the fatbinary (nvFatbin 13.1 and newer).
 *
 * \param   [in] handle          nvFatbin handle.
 * \param   [in] code            The Tile IR.
 * \param   [in] size            The size of the Tile IR.
 * \param   [in] identifier      Name of the Tile IR, useful when extracting the fatbin with tools like cuobjdump.
 * \param   [in] optionsCmdLine  Options used during JIT compilation.
 */
nvFatbinResult nvFatbinAddTileIR(nvFatbinHandle handle, const void *code, size_t size, const char *identifier, const char *optionsCmdLine);
