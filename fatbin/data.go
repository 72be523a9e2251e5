package fatbin

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// ErrObfuscated is returned by Data for entries whose payload is obfuscated
// (LTO-IR written by recent toolkits); cuobjdump cannot decode them either.
var ErrObfuscated = errors.New("payload is obfuscated")

// Data returns the entry's payload, decompressed, as cuobjdump -xelf/-xptx
// would write it: a cubin for ELF kinds, the PTX text up to (not including)
// its terminating NUL for PTX kinds (KindPTX, KindRelocPTX), the bytes as
// they are for other kinds. It never
// allocates more than the declared uncompressed size (itself bounded when
// the file is parsed). The result is a fresh copy.
func (e *Entry) Data() ([]byte, error) {
	if e.Obfuscated {
		return nil, e.dataErr(ErrObfuscated)
	}
	var out []byte
	if !e.Compressed {
		out = bytes.Clone(e.raw)
		if out == nil {
			out = []byte{}
		}
	} else {
		src := e.raw[:e.CompressedSize]
		out = make([]byte, e.UncompressedSize)
		var err error
		switch e.Compression {
		case "lz4":
			err = lz4Decode(out, src)
		case "zstd":
			err = zstdDecode(out, src)
		}
		if err != nil {
			return nil, e.dataErr(err)
		}
	}
	if e.Kind.IsPTX() {
		if i := bytes.IndexByte(out, 0); i >= 0 {
			out = out[:i]
		}
	}
	return out, nil
}

func (e *Entry) dataErr(err error) error {
	return fmt.Errorf("fatbin: entry %d at offset %#x: %s payload: %w", e.Index, e.Offset, e.Kind, err)
}

var (
	zdecOnce sync.Once
	zdec     *zstd.Decoder
	zdecErr  error
)

// zstdDecode decodes the single zstd frame src into dst, which must come out
// exactly full.
func zstdDecode(dst, src []byte) error {
	var h zstd.Header
	if err := h.Decode(src); err != nil {
		return fmt.Errorf("zstd: %w", err)
	}
	if h.Skippable {
		return errors.New("zstd: skippable frame instead of data")
	}
	n := uint64(len(dst))
	if h.HasFCS && h.FrameContentSize != n {
		return fmt.Errorf("zstd frame content size %d does not match declared uncompressed size %d", h.FrameContentSize, n)
	}
	// A window larger than the output is never needed; allow some slack for
	// encoders that round it up.
	if !h.SingleSegment && h.WindowSize > max(2*n, MinRatioAllowance) {
		return fmt.Errorf("zstd window size %d too large for %d bytes of output", h.WindowSize, n)
	}
	zdecOnce.Do(func() {
		zdec, zdecErr = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0),
			zstd.WithDecodeAllCapLimit(true),
			zstd.WithDecoderMaxMemory(MaxUncompressedSize),
			zstd.WithDecoderMaxWindow(MaxUncompressedSize))
	})
	if zdecErr != nil {
		return zdecErr
	}
	out, err := zdec.DecodeAll(src, dst[:0])
	if err != nil {
		return fmt.Errorf("zstd: %w", err)
	}
	if len(out) != len(dst) {
		return fmt.Errorf("zstd: decoded %d bytes, declared uncompressed size is %d", len(out), len(dst))
	}
	if len(out) > 0 && &out[0] != &dst[0] {
		return errors.New("zstd: decoder reallocated the output buffer")
	}
	return nil
}

// lz4Length reads the extension bytes of an LZ4 literal or match length
// whose 4-bit field holds 15, from src[si:]: each byte adds its value to n
// and one below 255 ends the length. It stops at the end of src
// (truncated) or as soon as n passes limit, which no valid length does,
// and returns n and the index of the next input byte.
func lz4Length(src []byte, si, n, limit int) (_, next int, truncated bool) {
	for {
		if si >= len(src) {
			return n, si, true
		}
		c := src[si]
		si++
		n += int(c)
		if n > limit || c != 255 {
			return n, si, false
		}
	}
}

// lz4Decode decodes the raw LZ4 block src (no frame) into dst, which must
// come out exactly full.
func lz4Decode(dst, src []byte) error {
	di, si := 0, 0
	for si < len(src) {
		token := src[si]
		si++
		// Literals.
		lit := int(token >> 4)
		if lit == 15 {
			var truncated bool
			if lit, si, truncated = lz4Length(src, si, lit, len(src)); truncated {
				return fmt.Errorf("lz4: truncated literal length at input byte %d", si)
			}
			if lit > len(src) {
				return fmt.Errorf("lz4: literal length %d exceeds input at byte %d", lit, si)
			}
		}
		if lit > len(src)-si {
			return fmt.Errorf("lz4: literal run of %d bytes at input byte %d exceeds input (%d left)", lit, si, len(src)-si)
		}
		if lit > len(dst)-di {
			return fmt.Errorf("lz4: output exceeds declared uncompressed size %d", len(dst))
		}
		copy(dst[di:], src[si:si+lit])
		di += lit
		si += lit
		if si == len(src) {
			break // the last sequence has literals only
		}
		// Match.
		if len(src)-si < 2 {
			return fmt.Errorf("lz4: truncated match offset at input byte %d", si)
		}
		moff := int(src[si]) | int(src[si+1])<<8
		si += 2
		if moff == 0 || moff > di {
			return fmt.Errorf("lz4: match offset %d invalid at output byte %d", moff, di)
		}
		ml := int(token & 15)
		if ml == 15 {
			var truncated bool
			if ml, si, truncated = lz4Length(src, si, ml, len(dst)); truncated {
				return fmt.Errorf("lz4: truncated match length at input byte %d", si)
			}
			if ml > len(dst) {
				return fmt.Errorf("lz4: output exceeds declared uncompressed size %d", len(dst))
			}
		}
		ml += 4
		if ml > len(dst)-di {
			return fmt.Errorf("lz4: output exceeds declared uncompressed size %d", len(dst))
		}
		from := di - moff
		if moff >= ml {
			copy(dst[di:di+ml], dst[from:from+ml])
		} else {
			for i := range ml {
				dst[di+i] = dst[from+i]
			}
		}
		di += ml
	}
	if di != len(dst) {
		return fmt.Errorf("lz4: decoded %d bytes, declared uncompressed size is %d", di, len(dst))
	}
	return nil
}
