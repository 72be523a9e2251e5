package solver

import (
	"errors"
	"fmt"
)

// The conditions cuSOLVER reports in devInfo, for errors.Is: the errors
// the operations return are the types below, which match them.
var (
	ErrSingular            = errors.New("solver: the matrix is singular")
	ErrNotPositiveDefinite = errors.New("solver: the matrix is not positive definite")
	ErrNoConvergence       = errors.New("solver: the eigenvalue iteration did not converge")
)

// SingularError is FactorLU's error for a singular matrix: step Step of
// the factorization (counted from 1, as LAPACK's INFO) found U(Step, Step)
// exactly zero. The factorization completed, but it cannot solve.
type SingularError struct{ Step int }

func (e *SingularError) Error() string {
	return fmt.Sprintf("solver: LU: the matrix is singular: U(%d,%d) is exactly zero (step %d, counted from 1)", e.Step, e.Step, e.Step)
}

func (e *SingularError) Is(target error) bool { return target == ErrSingular }

// NotPositiveDefiniteError is FactorCholesky's error for a matrix that is
// not positive definite: its leading minor of order Minor is not.
type NotPositiveDefiniteError struct{ Minor int }

func (e *NotPositiveDefiniteError) Error() string {
	return fmt.Sprintf("solver: Cholesky: the matrix is not positive definite: its leading minor of order %d is not", e.Minor)
}

func (e *NotPositiveDefiniteError) Is(target error) bool { return target == ErrNotPositiveDefinite }

// NoConvergenceError is SymEig's error when Count off-diagonal elements of
// the intermediate tridiagonal form did not converge to zero.
type NoConvergenceError struct{ Count int }

func (e *NoConvergenceError) Error() string {
	return fmt.Sprintf("solver: SymEig: %d off-diagonal elements of the tridiagonal form did not converge to zero", e.Count)
}

func (e *NoConvergenceError) Is(target error) bool { return target == ErrNoConvergence }

// infoError turns devInfo into an error. A negative value names a wrong
// parameter, which the checks before each call should make impossible.
func infoError(fn string, info int32, positive func(int) error) error {
	switch {
	case info == 0:
		return nil
	case info < 0:
		return fmt.Errorf("solver: cuSOLVER's %s rejected its parameter %d (devInfo = %d)", fn, -info, info)
	}
	return positive(int(info))
}
