// A job-wide ranking's stacks and groups by index, each made when first read. A loading job is ranked again as its
// processes come in, and the page's `suspects` answer on it reads its first groups and their stacks only: making
// every stack and group of each ranking (10^6 stacks and 40,000 groups at 1,000 processes) was most of the ranking's
// time and of the garbage on the engine's merging thread. JobSuspects.stacks and .groups are made whole when read.

/** What the index reads of a stack and a group (core/stats/suspects.ts S, G). */
interface StackLike {
  processIndex: number;
  stackId: number;
  /** its group's rank */
  group: number;
}

interface GroupLike {
  group: number;
}

/** A ranking as the index sees it (core/stats/suspects.ts JobSuspects). */
interface RankingLike<S extends StackLike, G extends GroupLike> {
  stacks: S[];
  groups: G[];
  groupCount: number;
}

/** What a ranking made by rankSuspects knows of its stacks and groups without making them. */
export interface RankSource<S, G> {
  processIndex(k: number): number;
  stackId(k: number): number;
  /** the rank of the stack's group (S.group) */
  groupOf(k: number): number;
  stack(k: number): S;
  group(rank: number): G;
}

/** A list whose items are made when first read, or all at once when it is read whole (then kept whole). */
class MadeOnRead<T> {
  private made: T[] = [];

  constructor(
    private readonly count: number,
    private readonly make: (k: number) => T,
    private whole: T[] | null,
  ) {}

  at(k: number): T {
    if (this.whole) return this.whole[k];
    let x = this.made[k];
    if (!x) x = this.made[k] = this.make(k);
    return x;
  }

  all(): T[] {
    if (!this.whole) {
      const out = new Array<T>(this.count);
      for (let k = 0; k < out.length; k++) out[k] = this.made[k] ?? this.make(k);
      this.whole = out;
      this.made = [];
    }
    return this.whole;
  }
}

export class RankIndex<S extends StackLike, G extends GroupLike> {
  private readonly stackList: MadeOnRead<S>;
  private readonly groupList: MadeOnRead<G>;
  /** each group's stacks (index = group rank), made when first asked: `starts` into `members` */
  private starts: Int32Array | null = null;
  private members: Int32Array | null = null;

  constructor(
    /** how many stacks (JobSuspects.stacks.length) */
    readonly count: number,
    /** the groups' ranks are below this (JobSuspects.groupCount) */
    readonly groupCount: number,
    /** how many groups are kept (JobSuspects.groups.length) */
    readonly groupsKept: number,
    private readonly of: RankSource<S, G>,
    /** the stacks and groups when made already */
    whole: S[] | null = null,
    wholeGroups: G[] | null = null,
  ) {
    this.stackList = new MadeOnRead(count, (k) => of.stack(k), whole);
    this.groupList = new MadeOnRead(groupsKept, (g) => of.group(g), wholeGroups);
  }

  processIndex(k: number): number {
    return this.of.processIndex(k);
  }

  stackId(k: number): number {
    return this.of.stackId(k);
  }

  /** the rank of stack k's group */
  groupOf(k: number): number {
    return this.of.groupOf(k);
  }

  /** JobSuspects.stacks[k] */
  stack(k: number): S {
    return this.stackList.at(k);
  }

  /** JobSuspects.stacks */
  stacks(): S[] {
    return this.stackList.all();
  }

  /** JobSuspects.groups[rank] (undefined past the groups kept) */
  group(rank: number): G | undefined {
    return rank < 0 || rank >= this.groupsKept ? undefined : this.groupList.at(rank);
  }

  /** JobSuspects.groups */
  groups(): G[] {
    return this.groupList.all();
  }

  /** The stacks (indexes k, ascending: in rank order) of the group of rank `g`. */
  stacksOf(g: number): Int32Array {
    const { starts, members } = this.byGroup();
    if (g < 0 || g >= this.groupCount) return new Int32Array(0);
    return members.subarray(starts[g], starts[g + 1]);
  }

  /** How many stacks the group of rank `g` has (stacksOf(g).length). */
  stackCountOf(g: number): number {
    const { starts } = this.byGroup();
    return g < 0 || g >= this.groupCount ? 0 : starts[g + 1] - starts[g];
  }

  private byGroup(): { starts: Int32Array; members: Int32Array } {
    if (!this.starts || !this.members) {
      const rank = new Int32Array(this.count);
      for (let k = 0; k < rank.length; k++) rank[k] = this.groupOf(k);
      const starts = new Int32Array(this.groupCount + 2);
      for (let k = 0; k < rank.length; k++) starts[rank[k] + 2]++;
      for (let x = 2; x < starts.length; x++) starts[x] += starts[x - 1];
      const members = new Int32Array(this.count);
      for (let k = 0; k < rank.length; k++) members[starts[rank[k] + 1]++] = k;
      this.starts = starts;
      this.members = members;
    }
    return { starts: this.starts, members: this.members };
  }
}

const indexes = new WeakMap<object, RankIndex<StackLike, GroupLike>>();

/**
 * A ranking with its stacks and groups made as they are read (rankSuspects): both arrays are made whole the first
 * time either is read as a whole, keeping their places among the keys (an answer prints them in that order).
 */
export function lazyRanking<S extends StackLike, G extends GroupLike, T extends RankingLike<S, G>>(
  r: Omit<T, 'stacks' | 'groups'>,
  index: RankIndex<S, G>,
): T {
  const out = { stacks: [], groups: [], ...r } as unknown as T;
  Object.defineProperty(out, 'stacks', { enumerable: true, configurable: true, get: () => index.stacks() });
  Object.defineProperty(out, 'groups', { enumerable: true, configurable: true, get: () => index.groups() });
  indexes.set(out, index);
  return out;
}

/** The stacks and groups of a ranking by index: a lazy ranking's own, else one over its arrays. */
export function rankIndex<S extends StackLike, G extends GroupLike>(r: RankingLike<S, G>): RankIndex<S, G> {
  const known = indexes.get(r) as RankIndex<S, G> | undefined;
  if (known) return known;
  const { stacks, groups } = r;
  let count = Math.max(r.groupCount, groups.length);
  for (const s of stacks) count = Math.max(count, s.group + 1);
  const made = new RankIndex<S, G>(
    stacks.length,
    count,
    groups.length,
    {
      processIndex: (k) => stacks[k].processIndex,
      stackId: (k) => stacks[k].stackId,
      groupOf: (k) => stacks[k].group,
      stack: (k) => stacks[k],
      group: (g) => groups[g],
    },
    stacks,
    groups,
  );
  indexes.set(r, made);
  return made;
}
