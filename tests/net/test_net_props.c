/* NCCL's v11 and v12 net properties convert into each other field by field (net_inner.c, for a
 * delegated plugin of the other version): every shared field survives v12 -> v11 -> v12, the
 * virtual device list is cut to the 4 devices v11 holds, and railId/planeId, which v11 lacks,
 * come back undefined. */
#include <string.h>

#include "check.h"
#include "net_inner.h"

int main(void)
{
	ncclNetProperties_v12_t a, back;
	ncclNetProperties_v11_t mid;
	memset(&a, 0, sizeof(a));
	a.name = "nic";
	a.pciPath = "/sys/pci";
	a.guid = 0x1122334455667788ull;
	a.ptrSupport = 3;
	a.regIsGlobal = 1;
	a.forceFlush = 1;
	a.speed = 400000;
	a.port = 2;
	a.latency = 1.5f;
	a.maxComms = 65536;
	a.maxRecvs = 8;
	a.netDeviceType = 1;
	a.netDeviceVersion = 7;
	a.vProps.ndevs = 6;
	for (int i = 0; i < 6; i++)
		a.vProps.devs[i] = 10 + i;
	a.maxP2pBytes = 1ull << 31;
	a.maxCollBytes = 1ull << 30;
	a.maxMultiRequestSize = 4;
	a.railId = 5;
	a.planeId = 6;

	net_props_12_to_11(&a, &mid);
	CHECK_EQ_U64(mid.vProps.ndevs, NCCL_NET_MAX_DEVS_PER_NIC_V11);
	net_props_11_to_12(&mid, &back);
	CHECK(back.railId == NCCL_NET_ID_UNDEF && back.planeId == NCCL_NET_ID_UNDEF);
	CHECK_EQ_U64(back.vProps.ndevs, NCCL_NET_MAX_DEVS_PER_NIC_V11);
	for (int i = 0; i < NCCL_NET_MAX_DEVS_PER_NIC_V11; i++)
		CHECK_EQ_U64(back.vProps.devs[i], 10 + i);
	/* every other field as it was */
	back.vProps = a.vProps;
	back.railId = a.railId;
	back.planeId = a.planeId;
	CHECK(!memcmp(&a, &back, sizeof(a)));
	return check_summary("test_net_props");
}
