// Package fatbin reads CUDA fat binaries: the containers of PTX, cubin (ELF)
// and LTO-IR images that nvcc -fatbin, fatbinary and the nvFatbin library
// write, and that nvcc embeds in host objects, executables and shared
// libraries. It is pure Go: no cgo, no CUDA library.
//
// Parse reads a fat binary from memory and Open from a file; both accept a
// raw fat binary (one or several concatenated containers), a host ELF file
// or an ar archive of host objects.
// Entry.Data returns an image decompressed, byte-identical to what
// cuobjdump -xelf all -xptx all writes; File.ExtractName gives the name
// cuobjdump writes it under and File.List prints what cuobjdump -lelf -lptx
// prints.
//
// # Format
//
// All integers are little-endian. A container is a 16-byte header followed by
// entries:
//
//	0  uint32 magic        0xBA55ED50
//	4  uint16 version      1
//	6  uint16 header size  16
//	8  uint64 size         bytes of entries that follow the header
//
// Containers follow each other directly (files, .nv_fatbin sections); zero
// padding between them is skipped. Each entry is a header, at least 64 bytes
// long, immediately followed by its payload; the next entry starts right
// after the payload. Entry header:
//
//	0  uint16 kind            1 PTX, 2 ELF (cubin), 4 legacy cubin, 8 LTO-IR
//	                          ("nvvm"), 0x20 index, 0x40 relocatable PTX
//	2  uint16 format          0x0101
//	4  uint32 header size     64 plus the optional fields below, 8-byte aligned
//	8  uint64 payload size    stored bytes, padded to a multiple of 8
//	16 uint32 compressed size meaningful bytes of a compressed payload, else 0
//	20 uint32 options desc    offset in this header of {uint32 offset, uint32 size}
//	                          locating the options, 0 if none
//	24 uint16 minor version   code version: ELF ABI [1,7]/[1,8], PTX ISA [8,4]/[9,0]
//	26 uint16 major version
//	28 uint32 arch            SM number: 75, 90, 100, 120, ...
//	32 uint32 ident offset    offset in this header of the identifier (source
//	36 uint32 ident size      name given by nvcc/fatbinary --ident), 0/0 if none
//	40 uint64 flags           see below
//	48 uint64 tag             0, except on obfuscated LTO-IR
//	56 uint64 uncompressed size, 0 if not compressed
//	64 ...                    identifier, options descriptor, options (each
//	                          NUL-padded to 8 bytes); CUDA 12.4 always reserves
//	                          an empty 8-byte identifier slot at 64
//
// The options are the ptxas options of a PTX image (e.g. " -g
// --dont-merge-basicblocks --return-at-end", "--compile-only"), the NVVM
// options of an LTO-IR image, and for cubins of sm_100 and later a binary
// attribute record (flag 0x1000000).
//
// Flags: 0x1 64-bit host code, 0x2 debug (-G), 0x10 linux / 0x20 mac /
// 0x40 windows host, 0x2000 LZ4 compressed, 0x8000 zstd compressed, 0x10000
// obfuscated payload (LTO-IR; decoding needs a key cuobjdump does not have
// either), 0x100000 arch-specific target (sm_90a), 0x200000 family-specific
// target (sm_100f), 0x1000000 binary attribute record in the options.
//
// Compression: LZ4 payloads are a single raw LZ4 block (no frame); zstd
// payloads a standard zstd frame. CUDA 12.4 uses LZ4 (by default for PTX,
// with -Xfatbin -compress-all for everything); CUDA 13 uses zstd by default
// and LZ4 with --compress-mode=speed. PTX payloads are NUL-terminated text;
// Data strips the NUL as cuobjdump does. Declared uncompressed sizes are
// checked against MaxUncompressedSize and MaxCompressionRatio when parsing,
// and Data never allocates more than the declared size.
//
// # Host ELF files
//
// nvcc puts the containers of ordinary code in the .nv_fatbin section and
// those of relocatable device code (-rdc) objects in __nv_relfatbin; a linked
// executable may have both. Like cuobjdump, Open and ParseELF read
// .nv_fatbin, or __nv_relfatbin when there is no .nv_fatbin. Host code
// registers each container through a __fatBinC_Wrapper_t record in the
// .nvFatBinSegment section:
//
//	0  int32  magic     0x466243B1
//	4  int32  version   1, or 2 for prelinked (-rdc) registration
//	8  ptr    data      address of the container
//	16 ptr    filename_or_fatbins
//
// When neither data section is present the wrappers are followed instead.
//
// # Archives
//
// nvcc -lib writes an ar archive of host objects. ParseArchive (and Parse
// and Open on input starting "!<arch>\n") reads each member that is a host
// ELF object as above, or a raw fat binary, and notes the others; GNU and BSD
// long member names are understood. As cuobjdump does, List prints each
// member's lines under a "member /abs/path/libk.a:k.o:" line, and entries
// are numbered, and named after the archive, across all members
// (libk.3.sm_80.cubin).
//
// # Names
//
// cuobjdump lists and extracts kinds 2 and 0x10 (a kind it has no name for)
// as ELF files and kinds 1 and 0x40 as PTX files, and numbers ELF and PTX
// files separately, in file order over all containers ("ELF file    3:
// ..."). An entry with an identifier is
// extracted as "<identifier stem>.<arch>.<ext>" (x.cu -> x.sm_90.cubin), one
// without as "<input file stem>.<number>.<arch>.<ext>" (a.out ->
// a.2.sm_80.cubin), where a stem is the last path element without its last
// extension. The arch is "sm_NN" with an "a" suffix for arch-specific
// targets and, for PTX only, an "f" suffix for family-specific ones. Other
// kinds (LTO-IR, index, legacy cubin) are neither listed nor extracted by
// cuobjdump.
//
// # Errors
//
// Malformed input of any kind yields an error, never a panic: a *FormatError
// for the fat binary structure, naming the entry and the offset at fault,
// e.g. "fatbin: entry 2 at offset 0x1a0: payload size 4096 exceeds container
// (remaining 100)".
package fatbin
