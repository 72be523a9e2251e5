// Package enum names the values of the enum types of core and the library
// packages, whose values count from 0: one String for all of them, in the
// lowest layer both import.
package enum

import "strconv"

// Name is the String of an enum type typ whose values 0, 1, ... are named
// names, in order: a value's name, or "typ(v)" for a value without one.
func Name[E ~int | ~uint8](v E, typ string, names ...string) string {
	if i := int(v); i >= 0 && i < len(names) {
		return names[i]
	}
	return typ + "(" + strconv.Itoa(int(v)) + ")"
}
