package catalog

import "math"

// Disk facts shared by every built-in size.
const (
	// builtinOSVhdSizeMB is the OS disk limit Azure reports for every size.
	builtinOSVhdSizeMB = 1047552
	// builtinLowPriorityDiscount is the share of the dedicated price that
	// Azure Machine Learning charges on low-priority capacity.
	builtinLowPriorityDiscount = 0.2
)

// Whether a size supports premium storage, for readability of the table below.
const (
	sizePremiumIO  = true
	sizeStandardIO = false
)

// BuiltinSizes returns the VM sizes known without any configuration. Names,
// families and hardware facts are Azure's own, so YAML and scripts written
// for Azure Machine Learning (size: Standard_DS3_v2) run unchanged and
// quotas per family behave as they do on Azure. Prices are Linux
// pay-as-you-go list prices in USD per hour (East US); they feed cost
// reports only and are not a bill. Every call returns new values, so callers
// may change them.
func BuiltinSizes() []*Size {
	return []*Size{
		// General purpose, Dv2 memory-optimised and standard (premium storage).
		builtinCPUSize("Standard_DS1_v2", "standardDSv2Family", 1, 3.5, 7168, sizePremiumIO, 0.073),
		builtinCPUSize("Standard_DS2_v2", "standardDSv2Family", 2, 7, 14336, sizePremiumIO, 0.146),
		builtinCPUSize("Standard_DS3_v2", "standardDSv2Family", 4, 14, 28672, sizePremiumIO, 0.293),
		builtinCPUSize("Standard_DS4_v2", "standardDSv2Family", 8, 28, 57344, sizePremiumIO, 0.585),
		builtinCPUSize("Standard_DS5_v2", "standardDSv2Family", 16, 56, 114688, sizePremiumIO, 1.17),
		builtinCPUSize("Standard_DS11_v2", "standardDSv2Family", 2, 14, 28672, sizePremiumIO, 0.185),
		builtinCPUSize("Standard_DS12_v2", "standardDSv2Family", 4, 28, 57344, sizePremiumIO, 0.371),
		builtinCPUSize("Standard_DS13_v2", "standardDSv2Family", 8, 56, 114688, sizePremiumIO, 0.741),
		builtinCPUSize("Standard_DS14_v2", "standardDSv2Family", 16, 112, 229376, sizePremiumIO, 1.482),

		// General purpose, Dv3 and Dsv3.
		builtinCPUSize("Standard_D2_v3", "standardDv3Family", 2, 8, 51200, sizeStandardIO, 0.096),
		builtinCPUSize("Standard_D4_v3", "standardDv3Family", 4, 16, 102400, sizeStandardIO, 0.192),
		builtinCPUSize("Standard_D8_v3", "standardDv3Family", 8, 32, 204800, sizeStandardIO, 0.384),
		builtinCPUSize("Standard_D16_v3", "standardDv3Family", 16, 64, 409600, sizeStandardIO, 0.768),
		builtinCPUSize("Standard_D32_v3", "standardDv3Family", 32, 128, 819200, sizeStandardIO, 1.536),
		builtinCPUSize("Standard_D64_v3", "standardDv3Family", 64, 256, 1638400, sizeStandardIO, 3.072),
		builtinCPUSize("Standard_D2s_v3", "standardDSv3Family", 2, 8, 16384, sizePremiumIO, 0.096),
		builtinCPUSize("Standard_D4s_v3", "standardDSv3Family", 4, 16, 32768, sizePremiumIO, 0.192),
		builtinCPUSize("Standard_D8s_v3", "standardDSv3Family", 8, 32, 65536, sizePremiumIO, 0.384),
		builtinCPUSize("Standard_D16s_v3", "standardDSv3Family", 16, 64, 131072, sizePremiumIO, 0.768),
		builtinCPUSize("Standard_D32s_v3", "standardDSv3Family", 32, 128, 262144, sizePremiumIO, 1.536),
		builtinCPUSize("Standard_D64s_v3", "standardDSv3Family", 64, 256, 524288, sizePremiumIO, 3.072),

		// General purpose, Dv4, Dsv4 (no temporary disk) and Ddsv4.
		builtinCPUSize("Standard_D2_v4", "standardDv4Family", 2, 8, 0, sizeStandardIO, 0.096),
		builtinCPUSize("Standard_D4_v4", "standardDv4Family", 4, 16, 0, sizeStandardIO, 0.192),
		builtinCPUSize("Standard_D8_v4", "standardDv4Family", 8, 32, 0, sizeStandardIO, 0.384),
		builtinCPUSize("Standard_D2s_v4", "standardDSv4Family", 2, 8, 0, sizePremiumIO, 0.096),
		builtinCPUSize("Standard_D4s_v4", "standardDSv4Family", 4, 16, 0, sizePremiumIO, 0.192),
		builtinCPUSize("Standard_D8s_v4", "standardDSv4Family", 8, 32, 0, sizePremiumIO, 0.384),
		builtinCPUSize("Standard_D2ds_v4", "standardDDSv4Family", 2, 8, 76800, sizePremiumIO, 0.113),
		builtinCPUSize("Standard_D4ds_v4", "standardDDSv4Family", 4, 16, 153600, sizePremiumIO, 0.226),
		builtinCPUSize("Standard_D8ds_v4", "standardDDSv4Family", 8, 32, 307200, sizePremiumIO, 0.452),
		builtinCPUSize("Standard_D16ds_v4", "standardDDSv4Family", 16, 64, 614400, sizePremiumIO, 0.904),

		// General purpose, Dv5 and Dsv5 (no temporary disk).
		builtinCPUSize("Standard_D2_v5", "standardDv5Family", 2, 8, 0, sizeStandardIO, 0.096),
		builtinCPUSize("Standard_D4_v5", "standardDv5Family", 4, 16, 0, sizeStandardIO, 0.192),
		builtinCPUSize("Standard_D8_v5", "standardDv5Family", 8, 32, 0, sizeStandardIO, 0.384),
		builtinCPUSize("Standard_D2s_v5", "standardDSv5Family", 2, 8, 0, sizePremiumIO, 0.096),
		builtinCPUSize("Standard_D4s_v5", "standardDSv5Family", 4, 16, 0, sizePremiumIO, 0.192),
		builtinCPUSize("Standard_D8s_v5", "standardDSv5Family", 8, 32, 0, sizePremiumIO, 0.384),
		builtinCPUSize("Standard_D16s_v5", "standardDSv5Family", 16, 64, 0, sizePremiumIO, 0.768),

		// Memory optimised, Ev3, Esv3 and Edsv4.
		builtinCPUSize("Standard_E2_v3", "standardEv3Family", 2, 16, 51200, sizeStandardIO, 0.126),
		builtinCPUSize("Standard_E4_v3", "standardEv3Family", 4, 32, 102400, sizeStandardIO, 0.252),
		builtinCPUSize("Standard_E8_v3", "standardEv3Family", 8, 64, 204800, sizeStandardIO, 0.504),
		builtinCPUSize("Standard_E2s_v3", "standardESv3Family", 2, 16, 32768, sizePremiumIO, 0.126),
		builtinCPUSize("Standard_E4s_v3", "standardESv3Family", 4, 32, 65536, sizePremiumIO, 0.252),
		builtinCPUSize("Standard_E8s_v3", "standardESv3Family", 8, 64, 131072, sizePremiumIO, 0.504),
		builtinCPUSize("Standard_E16s_v3", "standardESv3Family", 16, 128, 262144, sizePremiumIO, 1.008),
		builtinCPUSize("Standard_E32s_v3", "standardESv3Family", 32, 256, 524288, sizePremiumIO, 2.016),
		builtinCPUSize("Standard_E2ds_v4", "standardEDSv4Family", 2, 16, 76800, sizePremiumIO, 0.144),
		builtinCPUSize("Standard_E4ds_v4", "standardEDSv4Family", 4, 32, 153600, sizePremiumIO, 0.288),
		builtinCPUSize("Standard_E8ds_v4", "standardEDSv4Family", 8, 64, 307200, sizePremiumIO, 0.576),

		// Compute optimised, Fsv2.
		builtinCPUSize("Standard_F2s_v2", "standardFSv2Family", 2, 4, 16384, sizePremiumIO, 0.0846),
		builtinCPUSize("Standard_F4s_v2", "standardFSv2Family", 4, 8, 32768, sizePremiumIO, 0.169),
		builtinCPUSize("Standard_F8s_v2", "standardFSv2Family", 8, 16, 65536, sizePremiumIO, 0.338),
		builtinCPUSize("Standard_F16s_v2", "standardFSv2Family", 16, 32, 131072, sizePremiumIO, 0.677),
		builtinCPUSize("Standard_F32s_v2", "standardFSv2Family", 32, 64, 262144, sizePremiumIO, 1.353),
		builtinCPUSize("Standard_F72s_v2", "standardFSv2Family", 72, 144, 589824, sizePremiumIO, 3.045),

		// GPU, NCsv3 (NVIDIA V100 16 GB).
		builtinGPUSize("Standard_NC6s_v3", "standardNCSv3Family", 6, 112, 1, "V100", 753664, sizePremiumIO, 3.06),
		builtinGPUSize("Standard_NC12s_v3", "standardNCSv3Family", 12, 224, 2, "V100", 1509376, sizePremiumIO, 6.12),
		builtinGPUSize("Standard_NC24s_v3", "standardNCSv3Family", 24, 448, 4, "V100", 3018752, sizePremiumIO, 12.24),
		builtinGPUSize("Standard_NC24rs_v3", "standardNCSv3Family", 24, 448, 4, "V100", 3018752, sizePremiumIO, 13.464),

		// GPU, NCasT4_v3 (NVIDIA T4).
		builtinGPUSize("Standard_NC4as_T4_v3", "standardNCASv3_T4Family", 4, 28, 1, "T4", 184320, sizePremiumIO, 0.526),
		builtinGPUSize("Standard_NC8as_T4_v3", "standardNCASv3_T4Family", 8, 56, 1, "T4", 368640, sizePremiumIO, 0.752),
		builtinGPUSize("Standard_NC16as_T4_v3", "standardNCASv3_T4Family", 16, 110, 1, "T4", 368640, sizePremiumIO, 1.204),
		builtinGPUSize("Standard_NC64as_T4_v3", "standardNCASv3_T4Family", 64, 440, 4, "T4", 2949120, sizePremiumIO, 4.352),

		// GPU, NC A100 v4 (NVIDIA A100 80 GB PCIe).
		builtinGPUSize("Standard_NC24ads_A100_v4", "standardNCADSA100v4Family", 24, 220, 1, "A100", 65536, sizePremiumIO, 3.673),
		builtinGPUSize("Standard_NC48ads_A100_v4", "standardNCADSA100v4Family", 48, 440, 2, "A100", 131072, sizePremiumIO, 7.346),
		builtinGPUSize("Standard_NC96ads_A100_v4", "standardNCADSA100v4Family", 96, 880, 4, "A100", 262144, sizePremiumIO, 14.692),

		// GPU, ND multi-GPU training sizes (NVLink / InfiniBand).
		builtinGPUSize("Standard_ND40rs_v2", "standardNDSv2Family", 40, 672, 8, "V100", 3018752, sizePremiumIO, 22.032),
		builtinGPUSize("Standard_ND96asr_v4", "standardNDASv4_A100Family", 96, 900, 8, "A100", 6144000, sizePremiumIO, 27.197),
		builtinGPUSize("Standard_ND96amsr_A100_v4", "standardNDAMSv4_A100Family", 96, 1900, 8, "A100", 6553600, sizePremiumIO, 32.77),
		builtinGPUSize("Standard_ND96isr_H100_v5", "standardNDSH100v5Family", 96, 1900, 8, "H100", 1024000, sizePremiumIO, 98.32),

		// GPU, NVv3 visualisation (NVIDIA Tesla M60).
		builtinGPUSize("Standard_NV12s_v3", "standardNVSv3Family", 12, 112, 1, "M60", 327680, sizePremiumIO, 1.14),
		builtinGPUSize("Standard_NV24s_v3", "standardNVSv3Family", 24, 224, 2, "M60", 655360, sizePremiumIO, 2.28),
		builtinGPUSize("Standard_NV48s_v3", "standardNVSv3Family", 48, 448, 4, "M60", 1310720, sizePremiumIO, 4.56),

		// GPU sizes Azure has retired (NC K80, NCv2 P100, ND P40). They stay
		// so that older examples and YAML naming them still run.
		builtinGPUSize("Standard_NC6", "standardNCFamily", 6, 56, 1, "K80", 348160, sizeStandardIO, 0.90),
		builtinGPUSize("Standard_NC12", "standardNCFamily", 12, 112, 2, "K80", 696320, sizeStandardIO, 1.80),
		builtinGPUSize("Standard_NC24", "standardNCFamily", 24, 224, 4, "K80", 1474560, sizeStandardIO, 3.60),
		builtinGPUSize("Standard_NC6s_v2", "standardNCSv2Family", 6, 112, 1, "P100", 753664, sizePremiumIO, 2.07),
		builtinGPUSize("Standard_NC12s_v2", "standardNCSv2Family", 12, 224, 2, "P100", 1509376, sizePremiumIO, 4.14),
		builtinGPUSize("Standard_NC24s_v2", "standardNCSv2Family", 24, 448, 4, "P100", 3018752, sizePremiumIO, 8.28),
		builtinGPUSize("Standard_ND6s", "standardNDSFamily", 6, 112, 1, "P40", 753664, sizePremiumIO, 2.07),
		builtinGPUSize("Standard_ND12s", "standardNDSFamily", 12, 224, 2, "P40", 1509376, sizePremiumIO, 4.14),
		builtinGPUSize("Standard_ND24s", "standardNDSFamily", 24, 448, 4, "P40", 3018752, sizePremiumIO, 8.28),
	}
}

// builtinCPUSize returns a size without GPUs.
func builtinCPUSize(name, family string, vcpus int, memoryGB float64, tempDiskMB int, premiumIO bool, pricePerHour float64) *Size {
	return builtinGPUSize(name, family, vcpus, memoryGB, 0, "", tempDiskMB, premiumIO, pricePerHour)
}

// builtinGPUSize returns a size usable by clusters and compute instances on
// both dedicated and low-priority capacity.
func builtinGPUSize(name, family string, vcpus int, memoryGB float64, gpus int, gpuModel string, tempDiskMB int, premiumIO bool, pricePerHour float64) *Size {
	return &Size{
		Name:                    name,
		Family:                  family,
		VCPUs:                   vcpus,
		GPUs:                    gpus,
		GPUModel:                gpuModel,
		MemoryGB:                memoryGB,
		OSVhdSizeMB:             builtinOSVhdSizeMB,
		MaxResourceVolumeMB:     tempDiskMB,
		LowPriorityCapable:      true,
		PremiumIO:               premiumIO,
		SupportedComputeTypes:   []string{"AmlCompute", "ComputeInstance"},
		PricePerHour:            pricePerHour,
		LowPriorityPricePerHour: math.Round(pricePerHour*builtinLowPriorityDiscount*10000) / 10000,
	}
}

// AzureRegionNames returns Azure's public region names in lowercase, as
// written in an Azure location field (for example "westus"). They are the
// names that may alias a location, so YAML written for Azure runs unchanged.
// Every call returns a new slice.
func AzureRegionNames() []string {
	return []string{
		// Americas.
		"eastus", "eastus2", "centralus", "northcentralus", "southcentralus",
		"westcentralus", "westus", "westus2", "westus3",
		"canadacentral", "canadaeast",
		"brazilsouth", "brazilsoutheast",
		"mexicocentral", "chilecentral",
		// Europe.
		"northeurope", "westeurope",
		"uksouth", "ukwest",
		"francecentral", "francesouth",
		"germanywestcentral", "germanynorth",
		"switzerlandnorth", "switzerlandwest",
		"norwayeast", "norwaywest",
		"swedencentral", "swedensouth",
		"polandcentral", "italynorth", "spaincentral",
		// Asia Pacific.
		"eastasia", "southeastasia",
		"japaneast", "japanwest",
		"koreacentral", "koreasouth",
		"australiaeast", "australiasoutheast", "australiacentral", "australiacentral2",
		"newzealandnorth",
		"centralindia", "southindia", "westindia", "jioindiacentral", "jioindiawest",
		"indonesiacentral", "malaysiawest",
		// Middle East and Africa.
		"uaenorth", "uaecentral",
		"qatarcentral", "israelcentral",
		"southafricanorth", "southafricawest",
	}
}
