/* csched-bench-true: /bin/true built static with musl, the benchmark's
 * yardstick for the cheapest possible exec. */
int main(void)
{
    return 0;
}
