//go:build !race

package readme

const raceBuild = false
