package core

import (
	"strings"
	"testing"
)

// TestZeroValues: zero and nil values of the newer types give errors (or
// nothing to do), never a panic, before any driver call.
func TestZeroValues(t *testing.T) {
	var nilDev *Device
	if err := nilDev.EnablePeerAccess(&Device{ordinal: 1}); err == nil || !strings.Contains(err.Error(), "nil *Device") {
		t.Errorf("EnablePeerAccess on a nil *Device: %v", err)
	}
	if _, err := nilDev.CanAccessPeer(&Device{ordinal: 1}); err == nil || !strings.Contains(err.Error(), "nil *Device") {
		t.Errorf("CanAccessPeer on a nil *Device: %v", err)
	}
	if err := (&Array{}).Close(); err != nil {
		t.Errorf("Close of a zero Array: %v", err)
	}
	if err := (&MipmappedArray{}).Close(); err != nil {
		t.Errorf("Close of a zero MipmappedArray: %v", err)
	}
	if _, err := (&TextureObject{}).launchHandle(); err == nil || !strings.Contains(err.Error(), "zero TextureObject") {
		t.Errorf("a zero TextureObject as a launch argument: %v", err)
	}
	if _, err := (&SurfaceObject{}).launchHandle(); err == nil || !strings.Contains(err.Error(), "zero SurfaceObject") {
		t.Errorf("a zero SurfaceObject as a launch argument: %v", err)
	}
	var zero Buffer
	for name, err := range map[string]error{
		"SetReadMostly":              zero.SetReadMostly(true),
		"SetPreferredLocation(none)": zero.SetPreferredLocation(Location{}),
		"SetPreferredLocation(host)": zero.SetPreferredLocation(HostLocation()),
		"SetAccessedBy":              zero.SetAccessedBy(HostLocation(), true),
	} {
		if err == nil || !strings.Contains(err.Error(), "zero Buffer") {
			t.Errorf("%s on a zero Buffer: %v", name, err)
		}
	}
}
