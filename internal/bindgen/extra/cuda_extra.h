/*
 * Driver functions that live in CUDA's interop and profiler headers
 * (cudaProfiler.h, cudaGL.h, cudaVDPAU.h, cudaEGL.h), which are not among
 * the shared headers. cudago declares them here, with the types they need,
 * from NVIDIA's driver API documentation, so that bindings/driver covers
 * them. Window-system types (GL, EGL, VDPAU) are plain integers or opaque
 * pointers; CUeglColorFormat is an integer.
 */
#include <cuda.h>

typedef unsigned int GLuint;
typedef unsigned int GLenum;
typedef int EGLint;
typedef void *EGLImageKHR;
typedef void *EGLStreamKHR;
typedef void *EGLSyncKHR;
typedef unsigned int VdpDevice;
typedef unsigned int VdpVideoSurface;
typedef unsigned int VdpOutputSurface;
/** The VDPAU get-proc-address function (a C function). */
typedef struct VdpGetProcAddress_st VdpGetProcAddress;

/** CUDA devices corresponding to an OpenGL device. */
typedef enum CUGLDeviceList_enum {
    CU_GL_DEVICE_LIST_ALL            = 0x01, /**< The CUDA devices for all GPUs used by the current OpenGL context */
    CU_GL_DEVICE_LIST_CURRENT_FRAME  = 0x02, /**< The CUDA devices for the GPUs used by the current OpenGL context in its currently rendering frame */
    CU_GL_DEVICE_LIST_NEXT_FRAME     = 0x03  /**< The CUDA devices for the GPUs to be used by the current OpenGL context in the next frame */
} CUGLDeviceList;

/** Flags to map or unmap a resource. */
typedef enum CUGLmap_flags_enum {
    CU_GL_MAP_RESOURCE_FLAGS_NONE          = 0x00,
    CU_GL_MAP_RESOURCE_FLAGS_READ_ONLY     = 0x01,
    CU_GL_MAP_RESOURCE_FLAGS_WRITE_DISCARD = 0x02
} CUGLmap_flags;

#define MAX_PLANES 3

/** CUDA EglFrame type - array or pointer. */
typedef enum CUeglFrameType_enum {
    CU_EGL_FRAME_TYPE_ARRAY = 0,  /**< Frame type CUDA array */
    CU_EGL_FRAME_TYPE_PITCH = 1   /**< Frame type pointer */
} CUeglFrameType;

/** Resource location flags - sysmem or vidmem. */
typedef enum CUeglResourceLocationFlags_enum {
    CU_EGL_RESOURCE_LOCATION_SYSMEM = 0x00, /**< Resource location sysmem */
    CU_EGL_RESOURCE_LOCATION_VIDMEM = 0x01  /**< Resource location vidmem */
} CUeglResourceLocationFlags;

/** CUDA EGL color format (the values of cudaEGL.h's CUeglColorFormat). */
typedef unsigned int CUeglColorFormat;

/** CUDA EGLFrame structure descriptor: a frame of an EGLStream. */
typedef struct CUeglFrame_st {
    union {
        CUarray pArray[MAX_PLANES]; /**< Array of CUarray corresponding to each plane */
        void*   pPitch[MAX_PLANES]; /**< Array of pointers corresponding to each plane */
    } frame;
    unsigned int width;            /**< Width of first plane */
    unsigned int height;           /**< Height of first plane */
    unsigned int depth;            /**< Depth of first plane */
    unsigned int pitch;            /**< Pitch of first plane */
    unsigned int planeCount;       /**< Number of planes */
    unsigned int numChannels;      /**< Number of channels for the plane */
    CUeglFrameType frameType;      /**< Array or Pitch */
    CUeglColorFormat eglColorFormat; /**< CUDA EGL Color Format */
    CUarray_format cuFormat;       /**< CUDA Array Format */
} CUeglFrame_v1;
typedef CUeglFrame_v1 CUeglFrame;

/** CUDA EGLStream connection. */
typedef struct CUeglStreamConnection_st *CUeglStreamConnection;

#define cuGLGetDevices    cuGLGetDevices_v2
#define cuVDPAUCtxCreate  cuVDPAUCtxCreate_v2

/** Enable profile collection by the active profiling tool for the current context. */
CUresult CUDAAPI cuProfilerStart(void);
/** Disable profile collection by the active profiling tool for the current context. */
CUresult CUDAAPI cuProfilerStop(void);

/** Registers an OpenGL buffer object. */
CUresult CUDAAPI cuGraphicsGLRegisterBuffer(CUgraphicsResource *pCudaResource, GLuint buffer, unsigned int Flags);
/** Register an OpenGL texture or renderbuffer object. */
CUresult CUDAAPI cuGraphicsGLRegisterImage(CUgraphicsResource *pCudaResource, GLuint image, GLenum target, unsigned int Flags);
/** Gets the CUDA devices associated with the current OpenGL context. */
CUresult CUDAAPI cuGLGetDevices(unsigned int *pCudaDeviceCount, CUdevice *pCudaDevices, unsigned int cudaDeviceCount, CUGLDeviceList deviceList);

/** Gets the CUDA device associated with a VDPAU device. */
CUresult CUDAAPI cuVDPAUGetDevice(CUdevice *pDevice, VdpDevice vdpDevice, VdpGetProcAddress *vdpGetProcAddress);
/** Create a CUDA context for interoperability with VDPAU. */
CUresult CUDAAPI cuVDPAUCtxCreate(CUcontext *pCtx, unsigned int flags, CUdevice device, VdpDevice vdpDevice, VdpGetProcAddress *vdpGetProcAddress);
/** Registers a VDPAU VdpVideoSurface object. */
CUresult CUDAAPI cuGraphicsVDPAURegisterVideoSurface(CUgraphicsResource *pCudaResource, VdpVideoSurface vdpSurface, unsigned int flags);
/** Registers a VDPAU VdpOutputSurface object. */
CUresult CUDAAPI cuGraphicsVDPAURegisterOutputSurface(CUgraphicsResource *pCudaResource, VdpOutputSurface vdpSurface, unsigned int flags);

/** Registers an EGL image. */
CUresult CUDAAPI cuGraphicsEGLRegisterImage(CUgraphicsResource *pCudaResource, EGLImageKHR image, unsigned int flags);
/** Connect CUDA to EGLStream as a consumer. */
CUresult CUDAAPI cuEGLStreamConsumerConnect(CUeglStreamConnection *conn, EGLStreamKHR stream);
/** Connect CUDA to EGLStream as a consumer with given flags. */
CUresult CUDAAPI cuEGLStreamConsumerConnectWithFlags(CUeglStreamConnection *conn, EGLStreamKHR stream, unsigned int flags);
/** Disconnect CUDA as a consumer to EGLStream. */
CUresult CUDAAPI cuEGLStreamConsumerDisconnect(CUeglStreamConnection *conn);
/** Acquire an image frame from the EGLStream with CUDA as a consumer. */
CUresult CUDAAPI cuEGLStreamConsumerAcquireFrame(CUeglStreamConnection *conn, CUgraphicsResource *pCudaResource, CUstream *pStream, unsigned int timeout);
/** Releases the last frame acquired from the EGLStream. */
CUresult CUDAAPI cuEGLStreamConsumerReleaseFrame(CUeglStreamConnection *conn, CUgraphicsResource pCudaResource, CUstream *pStream);
/** Connect CUDA to EGLStream as a producer. */
CUresult CUDAAPI cuEGLStreamProducerConnect(CUeglStreamConnection *conn, EGLStreamKHR stream, EGLint width, EGLint height);
/** Disconnect CUDA as a producer to EGLStream. */
CUresult CUDAAPI cuEGLStreamProducerDisconnect(CUeglStreamConnection *conn);
/** Present a CUDA eglFrame to the EGLStream with CUDA as a producer. */
CUresult CUDAAPI cuEGLStreamProducerPresentFrame(CUeglStreamConnection *conn, CUeglFrame eglframe, CUstream *pStream);
/** Return the CUDA eglFrame to the EGLStream released by the consumer. */
CUresult CUDAAPI cuEGLStreamProducerReturnFrame(CUeglStreamConnection *conn, CUeglFrame *eglframe, CUstream *pStream);
/** Get an eglFrame through which to access a registered EGL graphics resource. */
CUresult CUDAAPI cuGraphicsResourceGetMappedEglFrame(CUeglFrame *eglFrame, CUgraphicsResource resource, unsigned int index, unsigned int mipLevel);
/** Creates an event from EGLSync object. */
CUresult CUDAAPI cuEventCreateFromEGLSync(CUevent *phEvent, EGLSyncKHR eglSync, unsigned int flags);
