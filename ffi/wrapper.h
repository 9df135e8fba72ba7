/* The OpenSM headers the plugin reads, in the order the daemon was built with.
 *
 * osm_config.h MUST come first: it defines ENABLE_OSM_PERF_MGR and friends, which change the
 * layout of osm_opensm_t (without it, osm->log sits 56 bytes too early). */
#include <opensm/osm_config.h>

#include <opensm/osm_version.h>
#include <opensm/osm_base.h>
#include <opensm/osm_log.h>
#include <opensm/osm_node.h>
#include <opensm/osm_port.h>
#include <opensm/osm_switch.h>
#include <opensm/osm_mcast_tbl.h>
#include <opensm/osm_multicast.h>
#include <opensm/osm_mcm_port.h>
#include <opensm/osm_subnet.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_event_plugin.h>
