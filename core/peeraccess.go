package core

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cudago/cudago/bindings/driver"
)

// Peer access to pool memory. Stream-ordered pools (the default pool that
// Device.Allocate uses, and IPC pools) are not covered by
// cuCtxEnablePeerAccess: another device reaches their memory only once the
// pool grants it access (cuMemPoolSetAccess). Without it a kernel on the
// other device faults with an illegal address, and peer copies are staged
// through the host at a tenth of NVLink's speed (both seen on two H100s).

// PeerAccessibleBy returns the devices other than the resource's own that
// may read and write the Buffers of its pool (the device's current pool,
// the one Allocate uses), in ordinal order.
func (r *DeviceMemoryResource) PeerAccessibleBy() ([]*Device, error) {
	if r == nil || r.dev == nil {
		return nil, errors.New("core: DeviceMemoryResource.PeerAccessibleBy: nil or zero resource")
	}
	pool, err := cuDeviceGetMemPool(r.dev.handle)
	if err != nil {
		return nil, err
	}
	return poolPeers(r.dev, pool)
}

// SetPeerAccessibleBy makes the Buffers of the resource's pool (the
// device's current pool: every Buffer it gave and will give, as
// cuda.core's peer_accessible_by) readable and writable by exactly the
// devices given, besides its own: access is granted to those that lack it
// and revoked from any other. Each must be able to reach the resource's
// device (Device.CanAccessPeer). Revoking access that a kernel still uses
// makes that kernel fault. Device.EnablePeerAccess grants the same access
// to one device without revoking any.
func (r *DeviceMemoryResource) SetPeerAccessibleBy(peers ...*Device) error {
	if r == nil || r.dev == nil {
		return errors.New("core: DeviceMemoryResource.SetPeerAccessibleBy: nil or zero resource")
	}
	pool, err := cuDeviceGetMemPool(r.dev.handle)
	if err != nil {
		return err
	}
	return setPoolPeers("DeviceMemoryResource.SetPeerAccessibleBy", r.dev, pool, peers, true)
}

// PeerAccessibleBy returns the devices other than the pool's own that may
// read and write the pool's Buffers, in ordinal order.
func (r *IPCMemoryResource) PeerAccessibleBy() ([]*Device, error) {
	if r == nil || r.dev == nil {
		return nil, errors.New("core: IPCMemoryResource.PeerAccessibleBy: nil or zero resource")
	}
	if !r.life.acquire() {
		return nil, ErrClosed
	}
	defer r.life.release()
	return poolPeers(r.dev, r.pool)
}

// SetPeerAccessibleBy makes the pool's Buffers readable and writable by
// exactly the devices given besides the pool's own, in this process (as
// DeviceMemoryResource.SetPeerAccessibleBy). An importing process sets
// access for its own devices on its imported resource.
func (r *IPCMemoryResource) SetPeerAccessibleBy(peers ...*Device) error {
	if r == nil || r.dev == nil {
		return errors.New("core: IPCMemoryResource.SetPeerAccessibleBy: nil or zero resource")
	}
	if !r.life.acquire() {
		return ErrClosed
	}
	defer r.life.release()
	return setPoolPeers("IPCMemoryResource.SetPeerAccessibleBy", r.dev, r.pool, peers, true)
}

// otherDevices returns every device but owner, in ordinal order.
func otherDevices(owner *Device) ([]*Device, error) {
	all, err := Devices()
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(d *Device) bool { return d == owner }), nil
}

// poolPeers lists the devices, other than owner, with read-write access
// to pool.
func poolPeers(owner *Device, pool driver.MemoryPool) ([]*Device, error) {
	others, err := otherDevices(owner)
	if err != nil {
		return nil, err
	}
	h, err := owner.primary.acquire()
	if err != nil {
		return nil, err
	}
	defer owner.primary.release()
	var out []*Device
	for _, d := range others {
		loc := driver.MemLocation{Type: driver.MemLocationTypeDevice, Id: int32(d.handle)}
		flags, err := cuMemPoolGetAccess(h, pool, &loc)
		if err != nil {
			return nil, err
		}
		if flags == driver.MemAccessFlagsProtReadwrite {
			out = append(out, d)
		}
	}
	return out, nil
}

// setPoolPeers grants read-write access to pool (owned by owner) to each
// of peers; with exact, it also revokes the access of every other device.
// Everything is checked before the driver is asked, and what changes is
// set in one cuMemPoolSetAccess call.
func setPoolPeers(fn string, owner *Device, pool driver.MemoryPool, peers []*Device, exact bool) error {
	grant := map[*Device]bool{}
	for _, p := range peers {
		if p == nil {
			return fmt.Errorf("core: %s: nil *Device", fn)
		}
		if p == owner {
			continue // the owner always has access; the driver refuses to set it
		}
		ok, err := p.CanAccessPeer(owner)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("core: %s: %v cannot access %v's memory (Device.CanAccessPeer is false)", fn, p, owner)
		}
		grant[p] = true
	}
	others, err := otherDevices(owner)
	if err != nil {
		return err
	}
	h, err := owner.primary.acquire()
	if err != nil {
		return err
	}
	defer owner.primary.release()
	var descs []driver.MemAccessDesc
	for _, d := range others {
		if !grant[d] && !exact {
			continue
		}
		loc := driver.MemLocation{Type: driver.MemLocationTypeDevice, Id: int32(d.handle)}
		have, err := cuMemPoolGetAccess(h, pool, &loc)
		if err != nil {
			return err
		}
		switch {
		case grant[d] && have != driver.MemAccessFlagsProtReadwrite:
			descs = append(descs, driver.MemAccessDesc{Location: loc, Flags: driver.MemAccessFlagsProtReadwrite})
		case !grant[d] && have != driver.MemAccessFlagsProtNone:
			descs = append(descs, driver.MemAccessDesc{Location: loc, Flags: driver.MemAccessFlagsProtNone})
		}
	}
	if len(descs) == 0 {
		return nil
	}
	if err := cuMemPoolSetAccess(h, pool, &descs[0], uint64(len(descs))); err != nil {
		return fmt.Errorf("core: %s: %w", fn, err)
	}
	return nil
}
