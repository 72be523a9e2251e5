/*
 * Declarations of NVML newer than the nvml.h of the local CUDA 12.4
 * install (scripts/setup-cuda.sh: Debian's libnvidia-ml-dev, the header of
 * the 550 drivers), written by cudago from NVIDIA's NVML documentation so
 * that the bindings cover them. NVML numbers its releases by the driver's
 * version: a library older than 560 lacks them, and the bindings return an
 * error naming that version.
 */
#include <nvml.h>

/**
 * Driver branch information, for nvmlSystemGetDriverBranch (drivers 560
 * and newer). Set version to nvmlSystemDriverBranchInfo_v1 before the call.
 */
typedef struct
{
    unsigned int version;                                 //!< The version of this struct: nvmlSystemDriverBranchInfo_v1
    char branch[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];  //!< The driver branch, NUL-terminated
} nvmlSystemDriverBranchInfo_v1_t;
typedef nvmlSystemDriverBranchInfo_v1_t nvmlSystemDriverBranchInfo_t;
#define nvmlSystemDriverBranchInfo_v1 NVML_STRUCT_VERSION(SystemDriverBranchInfo, 1)

/**
 * Retrieves the driver branch of the NVIDIA driver installed on the system.
 *
 * For all products.
 *
 * The branch identifier is an alphanumeric string. It will not exceed 80 characters in length
 * (including the NULL terminator). See \ref nvmlConstants::NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE.
 *
 * @param branchInfo                           Pointer to the driver branch information structure \a nvmlSystemDriverBranchInfo_t
 * @param length                               The maximum allowed length of the driver branch string
 *
 * @return
 *         - \ref NVML_SUCCESS                 successful completion
 *         - \ref NVML_ERROR_UNINITIALIZED     if the library has not been successfully initialized
 *         - \ref NVML_ERROR_INVALID_ARGUMENT  if \a branchInfo is NULL
 *         - \ref NVML_ERROR_INSUFFICIENT_SIZE if \a length is too small
 *         - \ref NVML_ERROR_UNKNOWN           on any unexpected error
 */
nvmlReturn_t DECLDIR nvmlSystemGetDriverBranch(nvmlSystemDriverBranchInfo_t *branchInfo, unsigned int length);
