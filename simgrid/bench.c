/*
 * The MPI benchmark `ibfabric simulate` runs under SimGrid's smpirun (compiled with smpicc).
 *
 *   bench PATTERN BYTES ITERATIONS [PHASE_FILE [barrier]]
 *
 * PATTERN: alltoall (MPI_Alltoall, BYTES per pair), allreduce (MPI_Allreduce of BYTES, as
 * doubles), bcast (MPI_Bcast of BYTES from rank 0), or phases (the phase file: in each phase
 * every rank sends BYTES to the rank its line names, -1 for none, receives from every rank that
 * names it, and waits for both; with `barrier`, all ranks also meet between phases).
 *
 * Phase file: "ranks N", "phases P", then P lines of N destination ranks.
 *
 * Rank 0 prints one line:
 *   ibfabric-bench pattern=P ranks=N bytes=B iterations=I simulated_seconds=T
 * T is the slowest rank's time of one iteration (from a common barrier), averaged over the
 * iterations. Errors go to stderr with exit status 2.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what) {
    fprintf(stderr, "bench: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

/* The phase table: dest[p * ranks + r]. */
struct phases {
    int ranks;
    int count;
    int *dest;
};

static void read_phases(const char *path, int size, struct phases *t) {
    FILE *f = fopen(path, "r");
    if (!f) fail("cannot open the phase file");
    if (fscanf(f, " ranks %d phases %d", &t->ranks, &t->count) != 2 || t->ranks != size ||
        t->count < 0)
        fail("the phase file does not start with `ranks N` (N = the job's ranks) and `phases P`");
    t->dest = malloc(sizeof(int) * (size_t)t->ranks * (size_t)(t->count ? t->count : 1));
    if (!t->dest) fail("out of memory");
    for (long k = 0; k < (long)t->ranks * t->count; k++) {
        if (fscanf(f, "%d", &t->dest[k]) != 1 || t->dest[k] < -1 || t->dest[k] >= t->ranks)
            fail("a phase line holds something other than ranks and -1");
    }
    fclose(f);
}

static void run_phases(const struct phases *t, int rank, long bytes, char *send, char *recv,
                       MPI_Request *req, int barrier) {
    for (int p = 0; p < t->count; p++) {
        const int *dest = t->dest + (long)p * t->ranks;
        int n = 0;
        for (int r = 0; r < t->ranks; r++) {
            if (dest[r] == rank && r != rank)
                MPI_Irecv(recv + (long)n * bytes, (int)bytes, MPI_BYTE, r, p, MPI_COMM_WORLD,
                          &req[n]), n++;
        }
        if (dest[rank] >= 0 && dest[rank] != rank)
            MPI_Isend(send, (int)bytes, MPI_BYTE, dest[rank], p, MPI_COMM_WORLD, &req[n]), n++;
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        if (barrier) MPI_Barrier(MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4) fail("usage: bench PATTERN BYTES ITERATIONS [PHASE_FILE [barrier]]");
    const char *pattern = argv[1];
    long bytes = atol(argv[2]);
    int iterations = atoi(argv[3]);
    if (bytes < 1 || bytes > 1L << 30 || iterations < 1) fail("BYTES or ITERATIONS out of range");

    struct phases table = {0, 0, NULL};
    int phases = strcmp(pattern, "phases") == 0;
    int barrier = argc > 5 && strcmp(argv[5], "barrier") == 0;
    if (phases) {
        if (argc < 5) fail("the phases pattern needs a phase file");
        read_phases(argv[4], size, &table);
    } else if (strcmp(pattern, "alltoall") && strcmp(pattern, "allreduce") &&
               strcmp(pattern, "bcast")) {
        fail("PATTERN must be alltoall, allreduce, bcast or phases");
    }

    long per_pair = strcmp(pattern, "alltoall") == 0 ? (long)size : 1;
    long in_degree = 1;
    for (int p = 0; p < table.count; p++) {
        long n = 0;
        for (int r = 0; r < table.ranks; r++)
            n += table.dest[(long)p * table.ranks + r] == rank && r != rank;
        if (n > in_degree) in_degree = n;
    }
    long recv_count = per_pair > in_degree ? per_pair : in_degree;
    char *send = calloc((size_t)(bytes * per_pair), 1);
    char *recv = calloc((size_t)(bytes * recv_count), 1);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(in_degree + 1));
    if (!send || !recv || !req) fail("out of memory");

    double total = 0;
    for (int it = 0; it < iterations; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        if (phases) {
            run_phases(&table, rank, bytes, send, recv, req, barrier);
        } else if (strcmp(pattern, "alltoall") == 0) {
            MPI_Alltoall(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
        } else if (strcmp(pattern, "allreduce") == 0) {
            int count = (int)(bytes / (long)sizeof(double));
            MPI_Allreduce(send, recv, count > 0 ? count : 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        } else {
            MPI_Bcast(send, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
        }
        double mine = MPI_Wtime() - start, slowest = 0;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        total += slowest;
    }
    if (rank == 0)
        printf("ibfabric-bench pattern=%s ranks=%d bytes=%ld iterations=%d simulated_seconds=%.9e\n",
               pattern, size, bytes, iterations, total / iterations);
    free(send);
    free(recv);
    free(req);
    free(table.dest);
    MPI_Finalize();
    return 0;
}
