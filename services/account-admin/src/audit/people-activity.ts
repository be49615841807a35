/** How the Activity page words the People actions. */
export const PEOPLE_ACTION_TEXT: Record<string, string> = {
  'user.invite': 'Invited',
  'user.role_change': 'Changed the role of',
  'user.disable': 'Disabled',
  'user.enable': 'Enabled',
  'user.remove': 'Removed',
  'invitation.revoke': 'Revoked the invitation of',
  'invitation.accept': 'Accepted the invitation:',
};
