package core

import "github.com/cudago/cudago/bindings/driver"

// CaptureStatus reports whether s is capturing a graph
// (cuStreamIsCapturing): StreamCaptureStatusNone, Active, or Invalidated
// (a capture that failed and waits for EndCapture). A library that would
// wait for the GPU (time its work, read a result back) asks first: that
// cannot be captured. While another stream captures in global mode, the
// legacy default stream answers with an error (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT).
func (s *Stream) CaptureStatus() (driver.StreamCaptureStatus, error) {
	h, err := s.acquire()
	if err != nil {
		return 0, err
	}
	defer s.release()
	return cuStreamIsCapturing(h, s.handle)
}
