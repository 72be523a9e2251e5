package nccl

import (
	"fmt"
	"reflect"

	ncclb "github.com/cudago/cudago/bindings/nccl"
	"github.com/cudago/cudago/core"
	"github.com/cudago/cudago/internal/libhandle"
	"github.com/cudago/cudago/lib"
)

// DataType is the type of the elements NCCL moves and reduces: one of
// NCCL's ncclDataType_t.
type DataType int

// The data types. Go has int8 to float64: their generic functions (and
// TypeOf) pick the DataType from the element type. Float16, BFloat16 and
// the two fp8 types have no Go type: pass them explicitly to the
// DataType methods (the Buffers hold their bits).
const (
	Int8       DataType = DataType(ncclb.Int8)
	Uint8      DataType = DataType(ncclb.Uint8)
	Int32      DataType = DataType(ncclb.Int32)
	Uint32     DataType = DataType(ncclb.Uint32)
	Int64      DataType = DataType(ncclb.Int64)
	Uint64     DataType = DataType(ncclb.Uint64)
	Float16    DataType = DataType(ncclb.Float16)  // IEEE 754 half precision
	Float32    DataType = DataType(ncclb.Float32)  //
	Float64    DataType = DataType(ncclb.Float64)  //
	BFloat16   DataType = DataType(ncclb.Bfloat16) // bfloat16: the upper half of a float32
	Float8E4M3 DataType = DataType(ncclb.Float8e4m3)
	Float8E5M2 DataType = DataType(ncclb.Float8e5m2)
)

// fp8Version is the first NCCL with the fp8 types (2.24.3, from nccl.h's
// history); an older library refuses them.
const fp8Version = 22403

var dataTypeNames = [...]string{"Int8", "Uint8", "Int32", "Uint32", "Int64", "Uint64", "Float16", "Float32", "Float64", "BFloat16", "Float8E4M3", "Float8E5M2"}
var dataTypeSizes = [...]int{1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1}

// DataTypes lists every data type, in NCCL's order.
func DataTypes() []DataType {
	out := make([]DataType, len(dataTypeNames))
	for i := range out {
		out[i] = DataType(i)
	}
	return out
}

func (d DataType) valid() bool { return d >= 0 && int(d) < len(dataTypeNames) }

// Size returns the size of one element in bytes (0 for an invalid type).
func (d DataType) Size() int {
	if !d.valid() {
		return 0
	}
	return dataTypeSizes[d]
}

func (d DataType) String() string {
	if !d.valid() {
		return fmt.Sprintf("DataType(%d)", int(d))
	}
	return dataTypeNames[d]
}

// Elem is the Go element types whose NCCL type they say.
type Elem interface {
	~int8 | ~uint8 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// TypeOf returns the DataType of the Go element type T (of its
// underlying type, for a named one).
func TypeOf[T Elem]() DataType {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Int8:
		return Int8
	case reflect.Uint8:
		return Uint8
	case reflect.Int32:
		return Int32
	case reflect.Uint32:
		return Uint32
	case reflect.Int64:
		return Int64
	case reflect.Uint64:
		return Uint64
	case reflect.Float32:
		return Float32
	default:
		return Float64
	}
}

// Op is a reduction: ncclRedOp_t's built-in operations.
type Op int

// The reductions. Avg is the sum divided by the number of ranks (for the
// integer types, rounded towards zero).
const (
	Sum  Op = Op(ncclb.Sum)
	Prod Op = Op(ncclb.Prod)
	Max  Op = Op(ncclb.Max)
	Min  Op = Op(ncclb.Min)
	Avg  Op = Op(ncclb.Avg)
)

var opNames = [...]string{"Sum", "Prod", "Max", "Min", "Avg"}

// Ops lists the reductions.
func Ops() []Op { return []Op{Sum, Prod, Max, Min, Avg} }

func (o Op) valid() bool { return o >= 0 && int(o) < len(opNames) }

func (o Op) String() string {
	if !o.valid() {
		return fmt.Sprintf("Op(%d)", int(o))
	}
	return opNames[o]
}

// ErrClosed is returned, without calling NCCL, by every operation on a
// communicator after its Close or Abort. It matches core.ErrClosed, and so
// do those errors: a closed communicator, Buffer or Stream is one check.
//
// Deprecated: match core.ErrClosed, as for every other closed object.
var ErrClosed error = errClosed{}

type errClosed struct{}

func (errClosed) Error() string        { return "nccl: use of a closed communicator" }
func (errClosed) Is(target error) bool { return target == core.ErrClosed }

// closedErr is ErrClosed from function fn: "nccl: AllReduce: use of a
// closed communicator".
type closedErr string

func (e closedErr) Error() string { return "nccl: " + string(e) + ": use of a closed communicator" }
func (e closedErr) Is(target error) bool {
	return target == ErrClosed || target == core.ErrClosed
}

// ArgError is the error of a bad argument, returned before NCCL is called:
// lib.ArgError, with Package "nccl".
//
// Deprecated: use lib.ArgError, which every library package returns.
type ArgError = lib.ArgError

func argErr(fn, arg, format string, args ...any) error {
	return libhandle.ArgErr("nccl", fn, arg, format, args...)
}
