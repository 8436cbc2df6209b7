// What reading one merged list of a page costs: Redis's time (costs.zrange, plus zrangePerEntry for
// each entry it returns) and the API's CPU (api.cpuPerList, plus cpuPerListEntry each). A list read
// returns at most the page's first slice (core/read-plan.ts firstSlice), fewer when the list holds
// fewer: under pull most followees' lists hold a post or two. Where the entries are not known (a
// capacity plan, the smooth load at population scale) a full slice is charged: an upper bound.
import { firstSlice } from '../../core/read-plan.js';
import type { ApiTier, Costs } from '../scenario/types.js';

/** Redis's time for list reads returning `entries` entries in all, over `lists` lists. */
export function listReadSeconds(costs: Costs, lists: number, entries: number): number {
  return costs.zrange * lists + costs.zrangePerEntry * entries;
}

/** The API's CPU for merging `lists` lists holding `entries` entries in all. */
export function listCpuSeconds(api: ApiTier, lists: number, entries: number): number {
  return api.cpuPerList * lists + api.cpuPerListEntry * entries;
}

/** Redis's time for one list read charged a full first slice of a `pageSize` page (the bound). */
export function fullListReadSeconds(costs: Costs, pageSize: number): number {
  return listReadSeconds(costs, 1, firstSlice(pageSize));
}

/** The API's CPU for `lists` lists, each charged a full first slice of a `pageSize` page (the bound). */
export function fullListsCpuSeconds(api: ApiTier, lists: number, pageSize: number): number {
  return listCpuSeconds(api, lists, lists * firstSlice(pageSize));
}
