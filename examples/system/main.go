// Command system prints the machine's NVIDIA driver and GPUs through
// package system (NVML), without creating a CUDA context: the driver and
// CUDA versions, then per GPU its name, UUID, PCI bus id, memory,
// temperature, power, clocks and utilization, and how each pair of GPUs is
// connected. A value a GPU does not report prints as "not supported".
//
// Without an NVIDIA driver (or NVML, which comes with it) it prints why on
// one line and exits 0; any other failure exits 1.
package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cudago/cudago/examples/internal/demo"
	"github.com/cudago/cudago/pathfinder"
	"github.com/cudago/cudago/system"
)

func main() { demo.Main("system", run) }

func run() error {
	devs, err := system.Devices()
	var noNVML *pathfinder.NotFoundError
	if errors.Is(err, system.ErrDriverNotLoaded) || errors.As(err, &noNVML) {
		fmt.Println("no GPU:", firstLine(err.Error()))
		return nil
	}
	if err != nil {
		return err
	}
	defer system.Shutdown()
	driver, err := system.DriverVersion()
	if err != nil {
		return err
	}
	cuda, err := system.CUDADriverVersion()
	if err != nil {
		return err
	}
	branch, err := system.DriverBranch()
	if errors.Is(err, system.ErrNotSupported) {
		branch = "(this driver does not say)"
	} else if err != nil {
		return err
	}
	fmt.Printf("NVIDIA driver %s, branch %s, supports CUDA %s; %d GPU(s)\n", driver, branch, cuda, len(devs))

	for _, d := range devs {
		s, err := d.Status()
		if err != nil {
			return err
		}
		// Values the GPU does not report are in s.Errs.
		show := func(field, text string) string {
			if err := s.Errs[field]; errors.Is(err, system.ErrNotSupported) {
				return "not supported"
			} else if err != nil {
				return err.Error()
			}
			return text
		}
		fmt.Printf("\nGPU %d: %s\n", s.Index, s.Name)
		fmt.Printf("  UUID         %s\n", s.UUID)
		fmt.Printf("  PCI bus id   %s\n", show("PCIBusID", s.PCIBusID))
		fmt.Printf("  memory       %s\n", show("Memory", fmt.Sprintf("%d MiB used of %d MiB (%d MiB reserved by the driver)",
			s.Memory.Used>>20, s.Memory.Total>>20, s.Memory.Reserved>>20)))
		fmt.Printf("  temperature  %s\n", show("Temperature", fmt.Sprintf("%d C", s.Temperature)))
		fmt.Printf("  power        %s of %s\n", show("PowerUsage", fmt.Sprintf("%.1f W", s.PowerUsage.Watts())),
			show("PowerLimit", fmt.Sprintf("%.0f W", s.PowerLimit.Watts())))
		fmt.Printf("  SM clock     %s MHz, max %s MHz\n", show("SMClock", fmt.Sprint(s.SMClock)), show("MaxSMClock", fmt.Sprint(s.MaxSMClock)))
		fmt.Printf("  memory clock %s MHz, max %s MHz\n", show("MemoryClock", fmt.Sprint(s.MemoryClock)), show("MaxMemoryClock", fmt.Sprint(s.MaxMemoryClock)))
		fmt.Printf("  utilization  %s\n", show("Utilization", fmt.Sprintf("GPU %d%%, memory %d%%", s.Utilization.GPU, s.Utilization.Memory)))
	}

	// How each pair of GPUs is connected, as nvidia-smi topo -m shows it.
	for i, a := range devs {
		for _, b := range devs[i+1:] {
			level, err := system.TopologyCommonAncestor(a, b)
			if err != nil {
				return err
			}
			p2p, err := system.P2P(a, b, system.P2PRead)
			if err != nil {
				return err
			}
			nvlink, err := system.P2P(a, b, system.P2PNVLink)
			if err != nil {
				return err
			}
			fmt.Printf("\nGPU %d - GPU %d: %s, peer reads %s, NVLink %s\n", a.Index(), b.Index(), level, p2p, nvlink)
		}
	}
	return nil
}

// firstLine keeps pathfinder's one-line summary of where it searched.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
