package core

import "strconv"

// enumString is the String method of an enum type typ whose values 0, 1,
// ... are named names, in order: a value's name, or typ(v) for a value
// without one.
func enumString[E ~int | ~uint8](v E, typ string, names ...string) string {
	if i := int(v); i >= 0 && i < len(names) {
		return names[i]
	}
	return typ + "(" + strconv.Itoa(int(v)) + ")"
}
