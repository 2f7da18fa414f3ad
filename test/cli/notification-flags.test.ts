import { notificationSettings } from '../../src/cli/notification-flags.js';

describe('the controller notification flags', () => {
  it("default to today's delivery: 1 a second, 10 s a try, 4 tries, 100 waiting", () => {
    expect(notificationSettings({})).toEqual({
      perSecond: 1,
      timeoutMs: 10_000,
      attempts: 4,
      queueLimit: 100,
      internalHosts: [],
    });
  });

  it('read the internal receivers an operator allows', () => {
    expect(
      notificationSettings({ 'internal-notification-hosts': 'Alertmanager.monitoring.svc:9093, 127.0.0.1' })
        .internalHosts,
    ).toEqual(['alertmanager.monitoring.svc:9093', '127.0.0.1']);
  });

  it('take a rate, a duration, a number of tries and a queue length', () => {
    expect(
      notificationSettings({
        'notification-rate': '5',
        'notification-timeout': '3s',
        'notification-attempts': '2',
        'notification-queue-length': '500',
      }),
    ).toEqual({ perSecond: 5, timeoutMs: 3000, attempts: 2, queueLimit: 500, internalHosts: [] });
  });

  it.each([
    [{ 'notification-rate': '0' }, '--notification-rate must be a whole number of at least 1, got "0"'],
    [{ 'notification-attempts': '1.5' }, '--notification-attempts must be a whole number of at least 1'],
    [{ 'notification-queue-length': '' }, '--notification-queue-length must be a whole number of at least 1'],
    [{ 'notification-timeout': 'soon' }, '--notification-timeout: not a duration: "soon" (e.g. 10s)'],
    [{ 'notification-timeout': '0s' }, '--notification-timeout must be longer than 0s'],
  ])('refuses %j', (values, message) => {
    expect(() => notificationSettings(values)).toThrow(message);
  });
});
