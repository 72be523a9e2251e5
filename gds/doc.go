// Package gds is GPUDirect Storage on core's Buffers and Streams.
package gds

//go:generate go run ../internal/bindgen -calls .
