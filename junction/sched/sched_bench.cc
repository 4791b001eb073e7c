// sched_bench.cc — placeholder until written
int main(){}
